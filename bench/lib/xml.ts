/** `text` with `&`, `<` and `>` escaped, for SVG text nodes. */
export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}
