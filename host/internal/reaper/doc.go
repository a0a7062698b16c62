// Package reaper is funchost's reaper mode on Linux: the host's own
// executable, started again with argv[0] [Arg0], becomes a child subreaper
// that starts the worker and ends everything the worker started (see
// reaper_linux.go).
//
// The mode starts in this package's init, and exits there: the reaper,
// which lives as long as the worker, should cost neither the start-up time
// of the packages that make the host (schema compilers, HTTP and RPC
// stacks, cloud clients, encoders and their tables) nor the memory their
// inits allocate and the pages of the binary they touch. Go initialises
// the packages in the order of their import paths, each as soon as what it
// imports is initialised, so this init runs after every package that sorts
// before this one and is ready before it is. Hence its imports are the
// fewest standard packages that sort late in that order and need little:
// os, os/signal, io, syscall and time, and not fmt, strconv or strings
// (they wait for unicode, and with it reflect, after which most of the
// host's packages are ready and initialise first). Then about twenty
// packages initialise before the reaper (the runtime's and the standard
// library's leaves) instead of seventy; TestReaperStartsBeforeTheHostsPackages
// in tests/ checks it. Keep it that way: no import outside the standard
// library, and none that needs reflect or unicode.
package reaper
