// Package submit makes and checks leaderboard submissions (envgap submit).
//
// Prepare writes a bundle from result folders of envgap eval or envgap run: each folder
// copied whole (results, summary, logs, the agent's raw and ATIF trajectories), the
// predictions of every attempt taken from the store that scored them, and metadata.yaml
// (agent, models, organisation, open-source flags, setting, corpus id, date). A bundle is
// a folder or a .tar.gz of one (Open reads either, refusing links, escaping paths and
// oversize content).
//
// Check says, one line a check, whether a bundle is a fair leaderboard entry: the corpus id
// is the release's, every non-excluded task of each split was scored, the setting is the
// leaderboard's or labelled as another, every attempt has a trajectory, nothing leaked and
// re-scoring the predictions on the evaluation core gives the same numbers. docs/submit.md
// is the user's guide.
package submit
