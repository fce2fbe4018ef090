// Package jobs runs a stage's work past one machine (verify, recheck, eval, run and study run
// with --slurm): a job array of envgap workers on a Slurm cluster, every worker taking items
// from one shared store.
//
// Three pieces, each usable alone:
//
//   - A work queue (Queue) in a folder of the shared store: the plan (the command, its
//     arguments and the items, in order) and one lease per item. A worker claims an item
//     under a lease that renews itself while the item runs; a lease that is not renewed in time
//     (the worker was killed, its node is gone, the job ran out of time) or whose owner
//     is known to be dead (same machine, process gone) is handed to another worker. Each
//     item is claimed at most MaxAttempts times (the first run and one redo by default);
//     an item whose workers kept dying is finished with an error, never with an outcome.
//   - A worker loop (Serve): claim, run the item through the caller's handler (the same
//     code a local run uses), record the result, until every item is done.
//   - A Slurm client (Client) that checks the cluster before anything is submitted
//     (sbatch present, controller answering, partition known, sbatch --test-only),
//     submits one job array, watches it with squeue and cancels it with scancel; and Run,
//     which does all of that and waits for the queue, reporting each result as it lands.
//
// # The work folder
//
// A run's folder is <store>/work/<run id>/ (outside the content-addressed part of the
// store: it is scratch, like tmp/):
//
//	plan.json                 the Plan
//	lock                      flock(2)ed while a lease changes
//	items/<n>.claim           item n's lease (a data.ClaimRecord): owner, label, token,
//	                          expiry, attempt, released, last error
//	items/<n>.done            item n's result (a Done), written once
//	job                       the Slurm job id of the array
//	worker.sh                 the batch script every array task runs
//	slurm-<job>_<task>.out    each array task's output
//
// Every file is written whole to a temporary name and renamed into place, so a reader
// never sees half a file. The folder is removed when the run finished and every item has
// a result; it is kept (and named in the error) otherwise.
//
// What the filesystem must give: atomic rename within a directory, flock(2) locks that
// every node sees (NFSv4, or NFSv3 with lockd; Lustre mounted with -o flock; GPFS,
// CephFS and BeeGFS have them), and clocks that agree to well within the lease (NTP).
//
// This package knows nothing of the stages (it is in lib, below them): the caller turns
// items into work and results. Each stage owns its work: its handler of one item and its
// item's result (verify.Stage.VerifyHandler and RecheckHandler, eval.ItemHandler and
// eval.Item, run.ItemHandler and run.Item, study.ItemHandler and study.Item); the
// command line registers each kind of work (Kind) in a typed registry (Kinds) that a
// worker decodes its plan with, and reads results back with ItemOf.
//
// The leases are the store's claims (data.ClaimDir) in the work folder's items/, under
// its lock: the same owner (data.Owner: host, pid, process start, so a worker that died on
// the machine that looks is seen dead at once), expiry, renewal every third of the lease, and
// take-over (a lapsed holder's claim is lost: Claim.Lost, its item cancelled and its
// result refused) as the store's claims on candidates. The queue adds what the store's
// claims do not need: the attempt each lease records, a lease given back kept (released,
// with why) so the next taker counts on, and an item with a result (items/<n>.done) ends
// its lease. Inside a worker the verify stage still takes the store's own claim on the
// candidate (data.Store.WaitClaim), so a local verify on the same store never runs a
// candidate a worker is running. The worker loop depends only on the Claims interface.
package jobs
