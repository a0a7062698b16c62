package instances

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestHasTables: a connection string reaches tables when it names a table
// endpoint, no endpoint at all, or the emulator; one that names only
// queue (or blob) endpoints does not, and the instances then keep their
// own record of used request states.
func TestHasTables(t *testing.T) {
	for cs, want := range map[string]bool{
		"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=k;EndpointSuffix=core.windows.net": true,
		"UseDevelopmentStorage=true": true,
		"DefaultEndpointsProtocol=http;AccountName=a;AccountKey=k;QueueEndpoint=http://127.0.0.1:1/a":          false,
		"AccountName=a;AccountKey=k;QueueEndpoint=http://q/a;BlobEndpoint=http://b/a;TableEndpoint=http://t/a": true,
		"AccountName=a;AccountKey=k;BlobEndpoint=http://b/a":                                                   false,
	} {
		assert.Equal(t, want, hasTables(cs), cs)
	}
}
