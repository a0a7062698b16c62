// Package tablehook lets the module's own tests add an entry to the MCP
// method table of package metadata: a test-only method, which shows that
// the table alone routes, advertises, scope-checks, counts and traces a
// method. Only this module can import it, so the table stays closed to
// apps; nothing but tests calls it.
package tablehook

// AddMethod, set by package metadata, adds spec (a metadata.MethodSpec)
// to the method table until restore is called. It is not safe while
// anything reads the table: call it before the host under test is made,
// and restore after it is closed.
var AddMethod func(spec any) (restore func())
