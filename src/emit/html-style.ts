/** The page's embedded style sheet: readable type, bordered tables, a sticky table of contents. */
export const HTML_STYLE = `
:root { --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --soft: #f6f8fa; --accent: #0b5fff; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
.page { display: grid; grid-template-columns: 16rem minmax(0, 1fr); max-width: 84rem; margin: 0 auto; }
nav { position: sticky; top: 0; align-self: start; max-height: 100vh; overflow: auto;
  padding: 2rem 1rem 2rem 1.5rem; border-right: 1px solid var(--line); font-size: 0.92rem; }
nav h2 { font-size: 0.8rem; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); margin: 0 0 0.6rem; }
nav ol { margin: 0; padding-left: 1.4rem; }
nav li { margin: 0.25rem 0; }
nav a { color: var(--ink); text-decoration: none; }
nav a:hover { color: var(--accent); text-decoration: underline; }
nav .open a { color: var(--muted); }
main { padding: 2rem 2.5rem 4rem; min-width: 0; }
h1 { font-size: 2rem; line-height: 1.25; margin: 0 0 1rem; }
h2 { font-size: 1.45rem; margin: 2.5rem 0 0.8rem; padding-bottom: 0.3rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.15rem; margin: 1.8rem 0 0.6rem; }
h4 { font-size: 1rem; margin: 1.4rem 0 0.5rem; }
p { margin: 0.6rem 0; max-width: 56rem; }
code { font: 0.86em/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  background: var(--soft); border: 1px solid #e4e8ec; border-radius: 4px; padding: 0.05em 0.3em; }
.table-wrap { overflow-x: auto; margin: 0.8rem 0 1.2rem; }
table { border-collapse: collapse; font-size: 0.9rem; }
th, td { border: 1px solid var(--line); padding: 0.35rem 0.6rem; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; white-space: nowrap; }
tbody tr:nth-child(even) td { background: #fbfcfd; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 0.8rem 1rem; overflow-x: auto;
  font: 0.86rem/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre.mermaid { background: #fff; text-align: center; }
section.open p { color: var(--muted); }
@media (max-width: 900px) { .page { display: block; } nav { position: static; border-right: 0;
  border-bottom: 1px solid var(--line); max-height: none; } main { padding: 1.5rem; } }
`;
