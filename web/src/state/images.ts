// Images for the composer: checked here first (type and size, so a refusal shows at once), then
// uploaded as raw bytes; the message names them by hash (docs/images.md).

import { api } from "../api/http";
import type { ImageRef } from "../api/types";

export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
export const MAX_IMAGES = 4;
const TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export function imageUrl(workspaceId: string, sha256: string): string {
  return `/api/workspaces/${encodeURIComponent(workspaceId)}/images/${encodeURIComponent(sha256)}`;
}

/** Why `file` cannot be attached, or null. The server checks the bytes again. */
export function imageProblem(file: File): string | null {
  if (!TYPES.has(file.type)) return `${file.name || "The file"} is not a PNG, JPEG, GIF or WebP image.`;
  if (file.size > MAX_IMAGE_BYTES) return `${file.name || "The image"} is larger than 5 MB: scale it down or save it as JPEG.`;
  return null;
}

export async function uploadImage(workspaceId: string, file: File): Promise<ImageRef> {
  const name = file.name || "pasted.png";
  const path = `/api/workspaces/${encodeURIComponent(workspaceId)}/images?name=${encodeURIComponent(name)}`;
  return api<ImageRef>("POST", path, file);
}

/** The images a tool result carried (`attach_file`, an MCP tool): its `meta.images`, keeping
 *  only well-formed references (a hash is all the image route takes). */
export function imagesOf(meta: Record<string, unknown> | null | undefined): ImageRef[] {
  const raw = meta?.images;
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (i): i is ImageRef =>
      typeof i === "object" && i !== null && typeof (i as ImageRef).sha256 === "string" && /^[0-9a-f]{64}$/.test((i as ImageRef).sha256),
  );
}
