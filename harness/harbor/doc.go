// Package harbor writes EnvGap's tasks in Harbor's task format and checks them: envgap
// export --harbor (Build: harbor/tasks.parquet and harbor/dataset.toml of the Hub folder)
// and envgap harbor check (Check: the structure, then Harbor-style trials on the engine).
//
// A task directory (TaskDir), following Harbor's task config schema 1.1 (SchemaVersion):
//
//	instruction.md                 the agent's task view and the rule
//	task.toml                      name envgap/<instance_id>, metadata, timeouts, resources
//	environment/Dockerfile         stages tool (envgap-task from source), registry, main
//	environment/docker-compose.yaml  main and the registry service
//	environment/envgap-task/       envgap's source of the registry proxy and the classifier
//	environment/project/           the project at base_commit with a one-commit .git
//	tests/test.sh                  the default-fail verifier
//	tests/baseline.json            SHA-256 of every project file at base_commit
//	tests/steps/*.sh               bootstrap, resolve and run commands
//	solution/solve.sh              writes the gold files (Harbor's oracle)
//
// tasks.parquet has one row per task not excluded from scoring: path (the instance id) and
// task_binary (Archive: a gzipped tar, byte-identical for the same files). ReadArchive
// refuses truncated, corrupt or hostile archives.
//
// Check's trials (Engine.Trials) are seed 001's smoke test: its five scenarios (unchanged,
// empty workspace, breaks the build, still failing, oracle) and envgap's own (source edit,
// a given change), each with the reward it must get; CheckReport.Summarize makes seed
// 001's two aggregate tables (Scenario | Expected | Result over every task, and the
// reward-signal breakdown Signal | Count | %). docs/harbor.md has the details.
package harbor
