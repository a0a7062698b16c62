// Package tasks keeps the MCP tasks of funchost (the tasks extension,
// io.modelcontextprotocol/tasks, SEP-2663): a record per task — its owner,
// status, pending input requests, answers, result or error, time to live —
// in a [Store] every instance of the app shares, so that any instance can
// answer tasks/get, tasks/update and tasks/cancel for any task.
//
// [Memory] keeps them in the process (one instance), within limits of
// tasks and result bytes counted per owner (package owner) and in all, and
// removes each record when it expires; the Azure Storage store keeps
// records in a table and large results in blobs written once, for several
// instances, and writes nothing when an update changes nothing.
//
// A kept result is never changed in place: stores and readers share it.
// A task id is 26 lower-case letters and digits ([NewID]); a store finds
// no task of another id without reading storage, and a read that finds a
// task expired removes it.
//
// [Claim] takes the task of a stopped instance for another, to run it
// again, with one conditional write: exactly one claimer wins.
//
// The other record the instances share here is that of the input-required
// request states that opened, so that a state opens once across the
// instances: [AzureStates] keeps one table row each, inserted only when
// missing; [RedisStates], with the redis backplane, one key each in its
// Redis server, set only when missing. Both carry an epoch, so that a
// state used before the record lost its data is refused.
package tasks
