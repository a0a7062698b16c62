// Package announce is funchost's end of the app-wide change channel (see
// metadata.EnvChangesURL): a [Channel] listens on a loopback port of its
// own, with a key of its own, and takes the changes any code of the worker
// process announces (a resource that changed, a list that changed). It
// checks each one (a kind the app may announce, a concrete absolute URI),
// lets them through at a rate, queues past it one change per resource or
// list (merging the changes of one resource, collapsing too many resources
// into one change of the resources list, never refusing), and answers the
// worker with a metadata.ChangeReceipt that says whether the change was
// sent to the other instances, missed, or waits.
//
// The channel knows nothing of the host: it is given a logger, a rate and
// the function that publishes a change (the listeners' hub), and the host
// hands the worker what [Channel.Offer] returns.
package announce
