// Package envfiles is envgap's one environment-file classifier: ClassifyPath says what a
// project path is as far as the environment goes (manifest, lockfile, build, docker, readme:
// environment files; test, vendored, source: not), and SourceChange says whether an overlay
// changes anything but environment files. The crawl uses it to keep merged pull requests that
// changed only environment files (Repaired), and eval, run and propose use it to refuse a
// prediction or a proposal that touches source.
package envfiles
