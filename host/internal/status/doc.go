// Package status is what funchost says of itself: the host's [State] and
// the worker's health, the problems met while running (the latest
// 50), the body of GET /admin/host/status ([Status], with the
// files named relative to the script root), the function list printed at
// start and the log line of each function that failed to load, and the
// [Console] that serializes the host's and the worker's lines.
package status
