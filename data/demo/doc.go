// Package demo is envgap's built-in demo corpus: a small coding-agent study under study/
// (import it with `envgap crawl lite --study data/demo/study`), a small GitHub under
// github/ (world.json and the files of its commits, issues and pull requests, served by
// `envgap github-serve --world data/demo/github` for `crawl issues` and `crawl prs`; see
// crawl/fakegithub and docs/development.md), and the fixture Python package index the
// Python projects of both install from, under pypi/.
//
// # The fixture index
//
// PyPI is not reachable from every machine envgap runs on, so the demo's Python packages
// come from a small index that ships with the project. It is a folder in the PEP 691
// layout, with the project pages as files:
//
//	pypi/simple/<name>/index.json   the PEP 691 JSON project page of <name> (normalised
//	                                name): "files" with filename, url (relative: the file
//	                                name), hashes.sha256, requires-python, size and PEP 700
//	                                "upload-time" (YYYY-MM-DDTHH:MM:SS.ffffffZ), "versions"
//	pypi/simple/<name>/<file>.whl   the wheels, next to their page
//
// The wheels are small pure-Python stand-ins written for the demo (their METADATA says
// so), generated deterministically from Packages by `go generate ./data/demo` (see
// genpypi); a test fails when the committed files differ from what the generator makes.
//
// PyPIHandler serves such a folder over HTTP as a PEP 691 JSON simple index rooted at
// /simple/: /simple/ lists the projects, /simple/<name>/ answers the page with
// Content-Type application/vnd.pypi.simple.v1+json, /simple/<name>/<file> the file. The
// registry proxy (core/registry) takes that URL as its PyPI upstream
// (Options.PyPIUpstream = "http://<addr>/simple/"), and pip can use it directly with
// --index-url. `go run ./data/demo/pypiserve --addr 127.0.0.1:8765` serves the embedded
// copy on its own.
package demo
