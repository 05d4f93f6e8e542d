// Thumbnails of a message's images. They load from the server's image route, which serves only
// that workspace's stored images by hash, with the type read from their bytes (never SVG).

import type { ImageRef } from "../../api/types";
import { imageUrl } from "../../state/images";

export function ImageThumbs(props: { workspaceId: string; images: readonly ImageRef[] }) {
  return (
    <div className="image-thumbs">
      {props.images.map((image) => (
        <a key={image.sha256} href={imageUrl(props.workspaceId, image.sha256)} target="_blank" rel="noreferrer noopener">
          <img
            className="image-thumb"
            src={imageUrl(props.workspaceId, image.sha256)}
            alt={image.name ?? "image"}
            title={image.name ?? undefined}
            loading="lazy"
          />
        </a>
      ))}
    </div>
  );
}
