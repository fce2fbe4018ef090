// Package site builds the EnvGap website: a static folder of HTML pages (Leaderboard,
// Tasks, a page per task, How runs are scored, Evaluation code) from a release's Hub folder
// and result folders of envgap eval or envgap run (envgap site).
//
// The folder needs no server and no build tool: it opens from file:// and from any static
// host. It loads nothing from outside itself (no CDN, no web font) and every page carries a
// Content-Security-Policy that allows only its own folder's scripts and styles. The same
// inputs give the same bytes: everything is sorted, and no time is written that does not
// come from the inputs.
//
// Every text is treated as hostile (problem statements, patches and file contents come from
// GitHub and from agents): html/template escapes what the pages print; a problem statement's
// Markdown is rendered by goldmark with raw HTML shown as text, images shown as text and
// links limited to http, https and mailto, then sanitised by bluemonday; the gold patch is
// highlighted by chroma with CSS classes; the Tasks page's script builds its rows with
// textContent only.
//
// The leaderboard's numbers are report.BuildReport's (the numbers envgap report prints):
// one board per set, a row per result folder scored on this release's corpus id; a folder
// scored on another corpus id is shown apart, labelled, and never ranked.
package site
