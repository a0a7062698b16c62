// Package reaper is funchost's reaper mode on Linux: the host's own
// executable, started again with argv[0] [Arg0], becomes a child subreaper
// that starts the worker and ends everything the worker started (see
// reaper_linux.go).
//
// The mode starts in this package's init, which runs before the inits of
// the packages that make the host (schema compilers, HTTP stacks and their
// tables) because it imports nothing but the standard library: the reaper,
// which lives as long as the worker, costs neither their start-up time nor
// their memory. Keep it that way: no import outside the standard library.
package reaper
