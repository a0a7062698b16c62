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
package tasks
