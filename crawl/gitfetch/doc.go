// Package gitfetch reads GitHub projects at single commits through go-git, without their
// history: every commit is fetched alone with depth 1, so nothing later than it (in
// particular a fix merged after it) is ever present. It is a leaf package (no envgap
// imports), so the evaluation core can materialise a candidate's project with Checkout
// without depending on the crawl stage.
//
// Fetching a commit by its hash needs the server to allow it: GitHub does for every
// reachable commit; a local repository served through file:// needs
// `git config uploadpack.allowReachableSHA1InWant true` (and the git binary, which go-git
// runs as git-upload-pack).
package gitfetch
