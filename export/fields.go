package export

// fieldDoc is one row of the card's "Data Fields" table.
type fieldDoc struct {
	Name, Type, Description string
}

// taskFieldDocs are the card's task columns, in the card's order, with the card's types and
// descriptions. A test checks that they match schemas.TaskFields and TaskRow.
var taskFieldDocs = []fieldDoc{
	{"instance_id", "string", "Task id, envgap__<owner>__<repo>-<issue number>. The number is always the issue number, also for Repaired tasks (their pull request number is in pr_number). To get the repository, read repo rather than parsing the id."},
	{"repo", "string", "GitHub repository, owner/name. Lite tasks were never on GitHub: there it names the agent that wrote the project and the language and study trial, <agent>/<language>-t<trial>."},
	{"base_commit", "string", "The commit the agent starts from and the evaluation rebuilds. Reported tasks: the last default-branch commit at or before the issue was opened. Repaired tasks: the pull request's base commit. Lite tasks: the one commit the harness makes from project_files (fixed author and date, so the hash is always the same)."},
	{"project_files", "list<struct<path: string, content: string>>", "Lite tasks only: the project exactly as the coding agent wrote it, one entry per file. The harness writes these files into a fresh repository to start the task. Empty for tasks from GitHub, which start from repo at base_commit."},
	{"patch", "string", "The reference environment fix, as a unified diff against base_commit. It only touches environment files (manifests, lockfiles, build and setup files, Dockerfiles, READMEs), never source or tests. Empty for controls. Do not show it to the agent."},
	{"gold_files", "list<struct<path: string, content: string>>", "The same fix as full file contents, one entry per path (content null means delete). {f['path']: f['content'] for f in row['gold_files']} is exactly the files object of a prediction. Empty for controls. Do not show it to the agent."},
	{"problem_statement", "string", "Issue title, a blank line, then the issue body, exactly as the agents in the published runs saw it."},
	{"problem_statement_truncated", "bool", "True when the issue body was already cut at 3,000 characters when it was collected. It ships as agents saw it."},
	{"created_at", "string", "When the issue was opened (ISO 8601). For Lite tasks, when the agent wrote the project, which is also the date of the commit base_commit names."},
	{"registry_date", "string", "Package registries are limited to what was published by this time: PyPI through a date-filtered index, npm through npm_config_before. Maven and system packages are not date-limited."},
	{"registry_date_source", "string", "Where registry_date comes from: pull_request_merged_at (Repaired), issue_created_at (Reported) or repaired_at (Lite: when the project's repair was saved)."},
	{"ecosystem", "string", "python, cpp, java or javascript. Picks the evaluation image and how installed packages are listed."},
	{"image", "string", "Local Docker tag of the evaluation image, built with envgap build-images. Not pushed to any registry."},
	{"manifest_path", "string", "The main dependency manifest (setup.py, CMakeLists.txt, pom.xml, package.json, ...)."},
	{"manifest_paths", "list<string>", "Every manifest read to get the declared dependencies."},
	{"bootstrap_command", "string", "First evaluation step: sets up the toolchain."},
	{"resolve_command", "string", "Installs or builds the declared environment. Must exit 0 for the task to count as resolved."},
	{"repro_command", "string", "Reproduces the failure: it fails at base_commit on repair tasks and passes after the reference fix. Agents may run it."},
	{"run_command", "string", "The workload that is run under a system-call trace. Resolved means resolve_command and this both exit 0."},
	{"d2_command", "string", "Command that lists installed packages, when the ecosystem default does not work. Usually null."},
	{"failure_signature", "string", "The line of the failing output that identifies the problem. Empty for controls."},
	{"expected_failure_regex", "string", "Pattern the evaluation looks for in the failing output. For controls it is the failure from the report that no longer happens."},
	{"is_control", "bool", "True when the environment already works at base_commit. The right move is to change nothing and not break it."},
	{"splits", "list<string>", "Split labels the harness stores (full, lite, secure). The Hub configs are built from these and from source."},
	{"source", "string", "reported (a failure users reported in an issue), repaired (a breakage maintainers fixed with an environment-only pull request) or lite (a project a coding agent wrote whose environment did not work on a clean machine)."},
	{"crawl_id", "string", "Internal id of the collection run a Repaired task came from; null for Reported and Lite tasks."},
	{"issue_url", "string", "The GitHub issue; null for Lite tasks."},
	{"issue_number", "int64", "The GitHub issue number; for Lite tasks, the number of the task the agent was given."},
	{"pull_request", "string", "The merged pull request whose environment changes are the reference fix (Repaired only). Do not show it to the agent."},
	{"pr_number", "int64", "Pull request number (Repaired only)."},
	{"pr_head_commit", "string", "Head commit of that pull request. gold_files match its contents exactly."},
	{"pr_merge_commit", "string", "Merge commit of that pull request."},
	{"categories", "list<string>", "Failure types (misspecification, underspecification, conflict, security). A task can have several or none."},
	{"security_flags", "list<string>", "Registry audit findings that put a task in secure."},
	{"excluded_from_scoring", "bool", "True for tasks found to be broken after they were admitted. They stay in the data so you can see them, but every leaderboard leaves them out. Filter on this before scoring."},
	{"exclusion_reason", "string", "Why the task is excluded; null when it is scored."},
	{"excluded_since", "string", "When it was excluded (ISO 8601 UTC); null when scored."},
	{"repo_license", "string", "SPDX license id of the repository (null if GitHub reported none). The issue text, patch and gold_files come from that repository and fall under this license. Null for Lite tasks."},
}

// candidateOnlyDocs describe the candidates config's own columns.
var candidateOnlyDocs = []fieldDoc{
	{"set", "string", "Where the candidate came from: reported (a GitHub issue), repaired (a merged pull request) or lite (a project a coding agent wrote)."},
	{"outcome", "string", "What happened to it: task, verified, already_works, not_reproduced, code_fix, fix_not_recorded, not_fixed or not_checked."},
	{"reason", "string", "Why it has that outcome, in words."},
	{"generated_by", "string", "Lite only: the coding agent that wrote the project."},
	{"domain", "string", "Lite only: the kind of program."},
	{"made_by", "string", "How the commands and the reference fix were made (see Annotations)."},
}
