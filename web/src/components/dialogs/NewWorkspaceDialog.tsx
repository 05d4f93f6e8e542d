import { useEffect, useState } from "react";
import { api, qs } from "../../api/http";
import type { ContainerEngine, RuntimeType } from "../../api/types";
import { configChoices, devcontainerRuntime, type DevcontainerConfig } from "../../lib/devcontainers";
import { agentChoices, createFields } from "../../lib/externalAgents";
import { useStore } from "../../lib/store";
import { app, closeDialog, selectedWorkspace } from "../../state/app";
import { createWorkspace } from "../../state/actions";
import { externalAgents, loadExternalAgents } from "../../state/externalAgents";
import { FormDialog } from "./FormDialog";
import { ShareCredentialsCheckbox } from "./ShareCredentials";

export function NewWorkspaceDialog(props: { projectPath: string | null }) {
  const projects = useStore(app, (s) => s.projects);
  const fallback = useStore(app, (s) => selectedWorkspace(s)?.projectPath ?? s.projects[0]?.path ?? "");
  const [project, setProject] = useState(props.projectPath ?? fallback);
  const [runtime, setRuntime] = useState<RuntimeType>(() => {
    const p = projects.find((x) => x.path === (props.projectPath ?? fallback));
    return p && !p.isGit ? "local" : "worktree";
  });
  const [host, setHost] = useState("");
  const [image, setImage] = useState("");
  const [shareCredentials, setShareCredentials] = useState(false);
  // The Docker choice is offered only when the server's container engine answers.
  const [engine, setEngine] = useState<ContainerEngine | null>(null);
  useEffect(() => {
    let live = true;
    api<ContainerEngine>("GET", "/api/server/container-engine")
      .then((found) => {
        if (live) setEngine(found);
      })
      .catch(() => undefined); // no answer: no Docker choice
    return () => {
      live = false;
    };
  }, []);
  const docker = engine?.available ? engine : null;
  // The project's devcontainer.json files: the Dev Container runtime is offered only with one.
  const [configs, setConfigs] = useState<DevcontainerConfig[]>([]);
  const [config, setConfig] = useState("");
  useEffect(() => {
    let live = true;
    setConfigs([]);
    setConfig("");
    if (project) {
      api<{ configs: DevcontainerConfig[] }>("GET", `/api/projects/devcontainers${qs({ path: project })}`)
        .then((d) => live && setConfigs(d.configs))
        .catch(() => undefined); // no list: no Dev Container choice
    }
    return () => {
      live = false;
    };
  }, [project]);
  useEffect(() => {
    if (runtime === "devcontainer" && configs.length === 0) setRuntime("worktree");
  }, [runtime, configs]);
  // The agent: xum's own, or an external ACP agent of config.json (read again on opening).
  const agents = agentChoices(useStore(externalAgents, (s) => s));
  const [agent, setAgent] = useState("");
  useEffect(() => {
    void loadExternalAgents();
  }, []);
  const [name, setName] = useState("");
  const [title, setTitle] = useState("");
  const submit = async () => {
    if (!project) throw new Error("Add a project first.");
    if (runtime === "ssh" && !host.trim()) throw new Error("Name the SSH host.");
    if (runtime === "docker" && !image.trim()) throw new Error("Name the container image (for example python:3.12).");
    const spec =
      runtime === "ssh"
        ? { type: "ssh", host: host.trim() }
        : runtime === "docker"
          ? { type: "docker", image: image.trim(), ...(shareCredentials ? { shareCredentials: true } : {}) }
          : { type: runtime };
    await createWorkspace({
      projectPath: project,
      runtime:
        runtime === "devcontainer" ? devcontainerRuntime(configs, config, shareCredentials) : spec,
      ...(name.trim() ? { name: name.trim() } : {}),
      ...(title.trim() ? { title: title.trim() } : {}),
      ...createFields(agent),
    });
    closeDialog();
  };

  return (
    <FormDialog title="New workspace" formId="new-ws" submitLabel="Create" onSubmit={submit}>
      <label className="field">
        <span>Project</span>
        <select className="input" value={project} onChange={(e) => setProject(e.target.value)} aria-label="Project">
          {projects.map((p) => (
            <option key={p.path} value={p.path}>
              {p.name} ({p.path})
            </option>
          ))}
        </select>
      </label>
      {agents.length > 0 ? (
        <label className="field">
          <span>Agent</span>
          <select className="input" value={agent} onChange={(e) => setAgent(e.target.value)} aria-label="Agent">
            {agents.map((a) => (
              <option key={a.value} value={a.value}>
                {a.value ? `${a.label} (external agent)` : "xum"}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <label className="field">
        <span>Runtime</span>
        <select className="input" value={runtime} onChange={(e) => setRuntime(e.target.value as RuntimeType)} aria-label="Runtime">
          <option value="worktree">Worktree: a branch in its own git worktree</option>
          <option value="local">Local: work in the project directory itself</option>
          <option value="ssh">SSH: a checkout on a remote host</option>
          {docker ? (
            <option value="docker">
              Docker: a checkout in a container ({docker.cli} {docker.version})
            </option>
          ) : null}
          {configs.length > 0 ? <option value="devcontainer">Dev Container: a worktree in the project's devcontainer.json container</option> : null}
        </select>
      </label>
      {runtime === "docker" ? (
        <>
          <label className="field">
            <span>Image</span>
            <input className="input" value={image} onChange={(e) => setImage(e.target.value)} placeholder="python:3.12 (needs bash and git)" aria-label="Image" />
          </label>
          <ShareCredentialsCheckbox checked={shareCredentials} onChange={setShareCredentials} />
        </>
      ) : null}
      {runtime === "devcontainer" && configs.length > 1 ? (
        <label className="field">
          <span>Dev Container config</span>
          <select className="input" value={config} onChange={(e) => setConfig(e.target.value)} aria-label="Dev Container config">
            {configChoices(configs).map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      {runtime === "devcontainer" ? <ShareCredentialsCheckbox checked={shareCredentials} onChange={setShareCredentials} /> : null}
      {runtime === "ssh" ? (
        <label className="field">
          <span>SSH host</span>
          <input className="input" value={host} onChange={(e) => setHost(e.target.value)} placeholder="user@host or an ssh config alias" aria-label="SSH host" />
        </label>
      ) : null}
      <label className="field">
        <span>Branch or name (optional)</span>
        <input className="input" value={name} onChange={(e) => setName(e.target.value)} placeholder="fix-login-bug" aria-label="Branch or name" data-autofocus />
        {runtime === "worktree" ? (
          <span className="faint" style={{ fontSize: 12 }}>
            An existing branch is checked out (and kept when the workspace is deleted); any other name makes a new branch.
          </span>
        ) : null}
      </label>
      <label className="field">
        <span>Title (optional)</span>
        <input className="input" value={title} onChange={(e) => setTitle(e.target.value)} aria-label="Title" />
      </label>
    </FormDialog>
  );
}
