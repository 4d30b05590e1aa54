/**
 * A text from outside (a commit's subject, a server's error) as gatesync keeps it: control
 * characters as spaces, cut to a bound that says how much was cut.
 */
export function boundText(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex -- replacing them is the point
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " ");
  return clean.length <= max ? clean : `${clean.slice(0, max)}… (${clean.length - max} more characters)`;
}
