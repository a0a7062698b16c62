// Package tasks keeps the MCP tasks of funchost (the tasks extension,
// io.modelcontextprotocol/tasks, SEP-2663): a record per task — its owner,
// status, pending input requests, answers, result or error, time to live —
// in a [Store] every instance of the app shares, so that any instance can
// answer tasks/get, tasks/update and tasks/cancel for any task.
//
// [Memory] keeps them in the process (one instance); the Azure Storage store
// keeps records in a table and large results in blobs, for several
// instances.
package tasks
