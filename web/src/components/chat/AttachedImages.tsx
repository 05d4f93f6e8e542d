// The images waiting in the composer (pasted or dropped): uploaded at once, shown as thumbnails
// with a remove button, sent with the next message. They are kept per workspace while the page
// is open; a failed send keeps them.

import { X } from "lucide-react";
import { useCallback, useState } from "react";
import { errorMessage } from "../../api/http";
import type { ImageRef } from "../../api/types";
import { imageProblem, imageUrl, MAX_IMAGES, uploadImage } from "../../state/images";

export interface ImageAttachments {
  images: ImageRef[];
  uploading: number;
  add: (files: readonly File[]) => Promise<void>;
  remove: (sha256: string) => void;
  clear: () => void;
}

/** Image files among a paste's or a drop's items. */
export function imageFiles(data: DataTransfer | null): File[] {
  if (!data) return [];
  return Array.from(data.files).filter((f) => f.type.startsWith("image/"));
}

export function useImageAttachments(workspaceId: string, onError: (message: string | null) => void): ImageAttachments {
  const [byWorkspace, setByWorkspace] = useState<Record<string, ImageRef[]>>({});
  const [uploading, setUploading] = useState(0);
  const images = byWorkspace[workspaceId] ?? [];
  const update = useCallback(
    (id: string, change: (cur: ImageRef[]) => ImageRef[]) => setByWorkspace((all) => ({ ...all, [id]: change(all[id] ?? []) })),
    [],
  );
  const add = async (files: readonly File[]) => {
    const id = workspaceId;
    onError(null);
    for (const file of files) {
      const problem = imageProblem(file);
      if (problem) {
        onError(problem);
        continue;
      }
      if ((byWorkspace[id] ?? []).length + uploading >= MAX_IMAGES) {
        onError(`A message carries at most ${MAX_IMAGES} images.`);
        return;
      }
      setUploading((n) => n + 1);
      try {
        const ref = await uploadImage(id, file);
        update(id, (cur) => (cur.some((i) => i.sha256 === ref.sha256) || cur.length >= MAX_IMAGES ? cur : [...cur, ref]));
      } catch (exc) {
        onError(errorMessage(exc));
      } finally {
        setUploading((n) => n - 1);
      }
    }
  };
  return {
    images,
    uploading,
    add,
    remove: (sha256) => update(workspaceId, (cur) => cur.filter((i) => i.sha256 !== sha256)),
    clear: () => update(workspaceId, () => []),
  };
}

export function AttachedImages(props: { workspaceId: string; attachments: ImageAttachments }) {
  const { images, uploading, remove } = props.attachments;
  if (images.length === 0 && uploading === 0) return null;
  return (
    <div className="attached-images" aria-label="Attached images">
      {images.map((image) => (
        <div className="attached-image" key={image.sha256}>
          <img src={imageUrl(props.workspaceId, image.sha256)} alt={image.name ?? "image"} title={image.name ?? undefined} />
          <button
            type="button"
            className="attached-remove"
            aria-label={`Remove ${image.name ?? "image"}`}
            onClick={() => remove(image.sha256)}
          >
            <X size={12} />
          </button>
        </div>
      ))}
      {uploading > 0 ? <span className="faint">Uploading…</span> : null}
    </div>
  );
}
