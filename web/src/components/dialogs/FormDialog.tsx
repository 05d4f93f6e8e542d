// A dialog around one form: Cancel and a submit button in the footer, the submit button
// disabled while the action runs (or while `canSubmit` is false), and whatever the action
// throws shown under the fields. Throw a plain Error for a check of the form's own.

import { useState, type ReactNode } from "react";
import { errorMessage } from "../../api/http";
import { closeDialog } from "../../state/app";
import { Modal } from "./Modal";

interface Props {
  title: string;
  formId: string;
  submitLabel: string;
  canSubmit?: boolean;
  onSubmit: () => Promise<void>;
  children: ReactNode;
}

export function FormDialog(props: Props) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      await props.onSubmit();
    } catch (exc) {
      setError(errorMessage(exc));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal
      title={props.title}
      onClose={closeDialog}
      footer={
        <>
          <button type="button" className="btn" onClick={closeDialog}>
            Cancel
          </button>
          <button
            type="submit"
            form={props.formId}
            className="btn btn-primary"
            disabled={busy || props.canSubmit === false}
          >
            {props.submitLabel}
          </button>
        </>
      }
    >
      <form
        id={props.formId}
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        {props.children}
        {error ? <div className="form-error" role="alert">{error}</div> : null}
      </form>
    </Modal>
  );
}
