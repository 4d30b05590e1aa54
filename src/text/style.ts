import { styleText } from "node:util";

export type Style = Parameters<typeof styleText>[0];
export type Paint = (style: Style, text: string) => string;

/**
 * Styles text when `color` is on. The caller decides (TTY and NO_COLOR); Node's own stream
 * check is off so that the decision is made once, here.
 */
export function painter(color: boolean): Paint {
  return color ? (style, text) => styleText(style, text, { validateStream: false }) : (_style, text) => text;
}
