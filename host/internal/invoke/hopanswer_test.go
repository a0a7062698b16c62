package invoke

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hopAnswers are raw answers of a worker: the usual form, which readHead
// reads, and the forms it leaves to net/http.
var hopAnswers = []struct {
	name  string
	raw   string
	usual bool // read by readHead, not net/http
}{
	{"usual", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: Mon, 07 Dec 2026 02:00:00 GMT\r\nContent-Length: 7\r\n\r\n{\"a\":1}", true},
	{"charset", "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}", true},
	{"lower case and spaces", "HTTP/1.1 200 OK\r\ncontent-length:   3 \r\ncontent-type:\ttext/plain \r\n\r\nabc", true},
	{"other type", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 3\r\n\r\nabc", true},
	{"no type", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", true},
	{"empty body", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true},
	{"keep-alive", "HTTP/1.1 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 3\r\n\r\nabc", true},
	{"not found", "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 17\r\n\r\nno such function\n", true},
	{"no reason", "HTTP/1.1 500\r\nContent-Length: 1\r\n\r\nx", true},
	{"body with blank lines", "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\na\n\nb\r\n\r\n", true},
	{"larger than the limit", "HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n" + strings.Repeat("x", 40), true},
	{"more than asked", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 200 OK\r\n", true},
	{"body cut", "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc", true},
	{"body missing", "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", true},

	{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\npar\r\n2\r\nts\r\n0\r\n\r\n", false},
	{"chunked and a length", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nparts\r\n0\r\n\r\n", false},
	{"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbye", false},
	{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabc", false},
	{"read to the end", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it", false},
	{"no header", "HTTP/1.1 200 OK\r\n\r\nall of it", false},
	{"bare LF", "HTTP/1.1 200 OK\nContent-Length: 3\n\nabc", false},
	{"a bare LF hides a length", "HTTP/1.1 200 OK\r\nX-A: 1\nContent-Length: 5\r\nContent-Length: 3\r\n\r\nabcde", false},
	{"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", false},
	{"two different lengths", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", false},
	{"signed length", "HTTP/1.1 200 OK\r\nContent-Length: +3\r\n\r\nabc", false},
	{"continuation", "HTTP/1.1 200 OK\r\nX-A: 1\r\n  2\r\nContent-Length: 3\r\n\r\nabc", false},
	{"space in a name", "HTTP/1.1 200 OK\r\nContent-Length : 3\r\n\r\nabc", false},
	{"a control byte in a name", "HTTP/1.1 200 OK\r\nX-\x01: 1\r\nContent-Length: 3\r\n\r\nabc", false},
	{"a slash in a name", "HTTP/1.1 200 OK\r\nX/Y: 1\r\nContent-Length: 3\r\n\r\nabc", false},
	{"a control byte in a value", "HTTP/1.1 200 OK\r\nX-A: 1\x00 2\r\nContent-Length: 3\r\n\r\nabc", false},
	{"a bare CR in a value", "HTTP/1.1 200 OK\r\nX-A: 1\r2\r\nContent-Length: 3\r\n\r\nabc", false},
	{"an empty name", "HTTP/1.1 200 OK\r\n: 1\r\nContent-Length: 3\r\n\r\nabc", false},
	{"no colon", "HTTP/1.1 200 OK\r\nContent-Length 3\r\n\r\nabc", false},
	{"no content", "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", false},
	{"not modified", "HTTP/1.1 304 Not Modified\r\n\r\n", false},
	{"continue first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", false},
	{"two spaces", "HTTP/1.1  200 OK\r\nContent-Length: 3\r\n\r\nabc", false},
	{"letters for a status", "HTTP/1.1 2x0 OK\r\nContent-Length: 3\r\n\r\nabc", false},
	{"header larger than the buffer", "HTTP/1.1 200 OK\r\nX-Large: " + strings.Repeat("y", 5000) + "\r\nContent-Length: 3\r\n\r\nabc", false},
	{"header cut", "HTTP/1.1 200 OK\r\nContent-Le", false},
	{"nothing", "", false},
	{"not HTTP", "SSH-2.0-OpenSSH_9.6\r\n\r\n", false},
}

// scriptedConn is a connection whose reads come from r and whose writes
// are dropped.
type scriptedConn struct {
	net.Conn
	r io.Reader
}

func (c *scriptedConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *scriptedConn) Write(p []byte) (int, error) { return len(p), nil }

// TestHopReadsAnswersAsNetHTTPDoes reads every answer, whole and in pieces,
// and compares what a call sees with what net/http reads from the same
// bytes.
func TestHopReadsAnswersAsNetHTTPDoes(t *testing.T) {
	const limit = 20
	pieces := map[string]func(io.Reader) io.Reader{
		"whole":          func(r io.Reader) io.Reader { return r },
		"a byte at once": iotest.OneByteReader,
		"halves":         iotest.HalfReader,
	}
	for _, tc := range hopAnswers {
		for how, cut := range pieces {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				br := bufio.NewReaderSize(cut(strings.NewReader(tc.raw)), 4<<10)
				wantAns, wantReusable, wantErr := readResponse(br, limit)

				ans, n, err := readHead(bufio.NewReaderSize(cut(strings.NewReader(tc.raw)), 4<<10))
				if tc.usual {
					require.NoError(t, err)
					require.NotNil(t, ans, "readHead reads the usual form")
					assert.GreaterOrEqual(t, n, int64(0))
				} else {
					assert.Nil(t, ans, "left to net/http")
				}

				c := &hopConn{c: &scriptedConn{r: cut(strings.NewReader(tc.raw))}}
				gotAns, gotReusable, gotErr := c.roundTrip(&hopRequest{addr: "127.0.0.1:1", path: "/fn"}, limit)
				if wantErr != nil {
					assert.Error(t, gotErr, "net/http: %v", wantErr)
					return
				}
				require.NoError(t, gotErr)
				assert.Equal(t, *wantAns, *gotAns)
				assert.Equal(t, wantReusable, gotReusable, "reusable")
			})
		}
	}
}

// TestHopAnswerAllocations: the usual answer costs the answer and its body,
// not net/http's header map, strings and body reader.
func TestHopAnswerAllocations(t *testing.T) {
	raw := hopAnswers[1].raw
	r := strings.NewReader(raw)
	c := &hopConn{c: &scriptedConn{r: r}}
	req := &hopRequest{addr: "127.0.0.1:1", path: "/fn"}
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset(raw)
		ans, reusable, err := c.roundTrip(req, 1<<20)
		if err != nil || !reusable || ans.contentType != "application/json; charset=utf-8" {
			t.Fatalf("%+v %v %v", ans, reusable, err)
		}
	})
	t.Logf("%v allocations", allocs)
	if !raceEnabled { // the race detector's build allocates more, and its pools drop buffers
		assert.LessOrEqual(t, allocs, 2.0, "the answer and its body")
	}
}

// BenchmarkHopAnswer reads a worker's usual answer (get_weather's direct
// reply, 1.3 KB) as a call does, and as net/http reads it.
func BenchmarkHopAnswer(b *testing.B) {
	body := `{"Outputs":{},"Logs":[],"ReturnValue":` + `{"structuredContent":{"city":"Buenos Aires","units":"metric","days":[` + strings.Repeat(`{"date":"2026-03-01","high":29.5,"low":21.0,"summary":"sunny"},`, 19) + `{}]}}}`
	raw := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nDate: Mon, 07 Dec 2026 02:00:00 GMT\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	for _, tc := range []struct {
		name string
		read func(*bufio.Reader, int64) (*hopAnswer, bool, error)
	}{{"in place", readAnswer}, {"net/http", readResponse}} {
		b.Run(tc.name, func(b *testing.B) {
			r := strings.NewReader(raw)
			br := bufio.NewReaderSize(r, 4<<10)
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				r.Reset(raw)
				br.Reset(r)
				if _, ok, err := tc.read(br, 1<<20); err != nil || !ok {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzHopAnswer: whatever a worker sends, a call sees what net/http reads
// from the same bytes.
func FuzzHopAnswer(f *testing.F) {
	for _, tc := range hopAnswers {
		f.Add([]byte(tc.raw), uint8(0))
	}
	f.Fuzz(func(t *testing.T, raw []byte, cut uint8) {
		pieces := func() io.Reader {
			switch cut % 3 {
			case 1:
				return iotest.OneByteReader(strings.NewReader(string(raw)))
			case 2:
				return iotest.HalfReader(strings.NewReader(string(raw)))
			}
			return strings.NewReader(string(raw))
		}
		const limit = 64
		wantAns, wantReusable, wantErr := readResponse(bufio.NewReaderSize(pieces(), 4<<10), limit)
		c := &hopConn{c: &scriptedConn{r: pieces()}}
		gotAns, gotReusable, gotErr := c.roundTrip(&hopRequest{addr: "127.0.0.1:1", path: "/fn"}, limit)
		if (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("net/http: %v; the hop: %v", wantErr, gotErr)
		}
		if wantErr != nil {
			return
		}
		assert.Equal(t, *wantAns, *gotAns)
		assert.Equal(t, wantReusable, gotReusable, "reusable")
	})
}
