// Package lite imports the coding-agent study (the Lite set): one candidate per project an
// agent wrote, with the environment part of the project's repair as its fix.
//
// Study layout (see docs/lite.md for the full description):
//
//	STUDY/
//	  problems.json                       optional: the problem list, or entries that fill
//	                                      or override it (number, title, domain, description)
//	  <agent>/<language>-t<trial>/p<N>/   one project (language: python, cpp, java, javascript)
//	    meta.json                         what the study recorded (see studylayout.Meta)
//	    written/                          the project exactly as the agent wrote it
//	    repaired/                         the project as it was when it ran (when repaired)
//	    prompt.txt                        optional: the exact task text the agent got
//
// The project <agent>/<language>-t<trial>/p<N> becomes the candidate
// envgap__<agent>__<language>-t<trial>-<N> with repo <agent>/<language>-t<trial> and
// issue_number N; project_files is written/, generated_by the agent, domain the problem's
// domain, created_at meta's created_at, registry_date meta's repaired_at (created_at when
// nothing was repaired), registry_date_source repaired_at.
//
// # Outcomes
//
// In this order: made_to_work false gives not_fixed; worked_first_time gives
// already_works; no repaired/ folder, a repaired copy identical to the project as written
// with no system packages recorded, or a path in repair_changes that the repaired copy has
// unchanged gives fix_not_recorded; a repair whose environment part is empty (only source,
// tests or data changed) gives code_fix. Otherwise the environment part is the fix
// (gold_files, and patch as a git-style unified diff against the project as written) and
// the outcome is not_checked, for verify to decide.
//
// # The environment part of a repair
//
// Changed, added and deleted environment files (IsEnvironmentFile: manifests, lockfiles,
// build and setup files, shell scripts, Dockerfiles, READMEs); a setup.sh that installs the
// repair's system packages with apt-get (studylayout.SetupScript: non-interactive, installs only what
// is missing, runs the project's own setup.sh after it); and, for a Java source the repair
// moved under src/main/java, an unchanged copy of the source as written at that path. All
// other edits are left out, and the reason lists them.
//
// # Base commit
//
// base_commit is the one commit made from project_files: every file mode 100644, author
// and committer "envgap <envgap@invalid>" dated created_at in UTC (+0000), the message
// "project as written" and a newline, no parent, on branch main. BaseCommit computes it
// and Materialize writes it into a directory. With the git CLI, the same commit is:
//
//	git init -q -b main work && cd work
//	# write every project_files entry (mode 0644), then:
//	git -c core.fileMode=false add -A
//	GIT_AUTHOR_NAME=envgap GIT_AUTHOR_EMAIL=envgap@invalid GIT_AUTHOR_DATE=<created_at> \
//	GIT_COMMITTER_NAME=envgap GIT_COMMITTER_EMAIL=envgap@invalid GIT_COMMITTER_DATE=<created_at> \
//	git -c commit.gpgSign=false commit -q -m "project as written"
//
// with created_at written with +0000 (e.g. 2026-03-02T10:15:00+00:00); the tests check
// that the CLI and BaseCommit agree.
package lite
