/**
 * Text from outside — a commit's subject and author, a server's error, a peer's answer, a
 * repository's names and values — as gatesync keeps and prints it.
 */

/**
 * Every control a terminal acts on: C0 but tab and newline (ESC starts a sequence that moves the
 * cursor, sets the title, writes a link), DEL, C1 (0x9b is CSI and 0x9d OSC by themselves, with
 * no ESC), and the bidirectional controls (U+061C, U+200E–U+200F, U+202A–U+202E embeddings and
 * overrides, U+2066–U+2069 isolates) that make a line read in another order than it is.
 */
// eslint-disable-next-line no-control-regex -- matching them is the point
const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The one stripping of text that came from a repository, a server or a peer: each control as a space. */
export function stripControls(text: string): string {
  return text.replace(controls, " ");
}

/** gatesync's own colours (style.ts): SGR sequences, which `terminalText` keeps. */
// eslint-disable-next-line no-control-regex -- ESC is what it matches
const ownColour = /\u001b\[[0-9;]*m/g;

/**
 * What reaches the terminal (the CLI's stdout and stderr): the colours gatesync paints kept,
 * every other control stripped — the last gate behind the printers, which strip what they
 * print of outside text (a repository's own colour sequence included) with `stripControls`.
 */
export function terminalText(text: string): string {
  let out = "";
  let at = 0;
  for (const m of text.matchAll(ownColour)) {
    out += stripControls(text.slice(at, m.index)) + m[0];
    at = m.index + m[0].length;
  }
  return at === 0 ? stripControls(text) : out + stripControls(text.slice(at));
}

/** A text from outside as gatesync keeps it: controls as spaces, cut to a bound that says how much was cut. */
export function boundText(text: string, max: number): string {
  const clean = stripControls(text);
  return clean.length <= max ? clean : `${clean.slice(0, max)}… (${clean.length - max} more characters)`;
}
