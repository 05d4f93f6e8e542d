import { describe, expect, it } from "vitest";
import { imageProblem, imagesOf, imageUrl } from "../state/images";
import { applyEvents, emptyTranscript } from "../state/transcript";
import { turnStart, user } from "./events";

const REF = { sha256: "a".repeat(64), media_type: "image/png", size: 70, name: "shot.png", width: 2, height: 2 };

describe("images", () => {
  it("ride on the user row, which has none when the message carried none", () => {
    const t = applyEvents(emptyTranscript(), [
      turnStart(1),
      { type: "user-message", seq: 2, text: "what is this?", images: [REF] },
      user(3, "plain"),
    ]);
    const [withImage, plain] = t.rows;
    expect(withImage?.kind === "user" && withImage.images).toEqual([REF]);
    expect(plain?.kind === "user" && plain.images).toBeUndefined();
  });

  it("are served by hash from the workspace's route", () => {
    expect(imageUrl("ws 1", REF.sha256)).toBe(`/api/workspaces/ws%201/images/${REF.sha256}`);
  });

  it("are checked before upload: SVG and oversize files are refused", () => {
    expect(imageProblem(new File(["<svg/>"], "x.svg", { type: "image/svg+xml" }))).toMatch(/not a PNG/);
    const big = new File([new Uint8Array(5 * 1024 * 1024 + 1)], "big.png", { type: "image/png" });
    expect(imageProblem(big)).toMatch(/larger than 5 MB/);
    expect(imageProblem(new File([new Uint8Array(10)], "ok.png", { type: "image/png" }))).toBeNull();
  });

  it("of a tool result are its meta's well-formed references", () => {
    expect(imagesOf({ images: [REF, { sha256: "../../x" }, "junk"] })).toEqual([REF]);
    expect(imagesOf({ path: "a.png" })).toEqual([]);
    expect(imagesOf(null)).toEqual([]);
  });
});
