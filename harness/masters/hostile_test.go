package masters

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/harness/client"
)

// hostileCase is one hostile request and the refusal it must get.
type hostileCase struct {
	name    string
	method  string
	path    string // with the query
	body    []byte // nil: none
	chunked bool   // send the body without a Content-Length
	status  int
	code    string
}

// jsonBody renders v as a request body, without HTML escaping (so a "<" is
// one byte on the wire, as a hostile client would send it).
func jsonBody(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// nodeView is what must not change under a refused request.
type nodeView struct {
	cursor         client.Cursor
	digest         string
	objects        int
	segments       int
	roleGeneration uint64
	producerView   uint64
	prefix         string // etcd's durable_prefix value
	prefixRev      int64  // and its mod revision
	batches        int64  // batch keys in etcd
}

func (c *cluster) view(cli *clientv3.Client, n *Node) nodeView {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.cli.State(ctx, n.URL, false)
	require.NoError(c.t, err)
	h, err := c.cli.Health(ctx, n.URL)
	require.NoError(c.t, err)
	require.True(c.t, h.Serving, "%s still serves", n.Name)
	ks := keyspace.Must("test")
	resp, err := cli.Get(ctx, ks.DurablePrefix())
	require.NoError(c.t, err)
	require.Len(c.t, resp.Kvs, 1, "durable_prefix")
	batches, err := cli.Get(ctx, ks.Batch(1), clientv3.WithRange(ks.Batch(1<<62)), clientv3.WithCountOnly())
	require.NoError(c.t, err)
	return nodeView{cursor: st.Cursor, digest: st.Digest, objects: st.Objects, segments: st.Segments,
		roleGeneration: h.RoleGeneration, producerView: h.ProducerView,
		prefix: string(resp.Kvs[0].Value), prefixRev: resp.Kvs[0].ModRevision, batches: batches.Count}
}

// send sends one raw request and decodes the JSON answer.
func send(t *testing.T, hc *http.Client, base string, tc hostileCase) (int, client.Result, http.Header) {
	t.Helper()
	var body io.Reader
	if tc.body != nil {
		body = bytes.NewReader(tc.body)
		if tc.chunked {
			body = io.MultiReader(body) // no Len: net/http sends it chunked
		}
	}
	req, err := http.NewRequest(tc.method, base+tc.path, body)
	require.NoError(t, err)
	if tc.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"), "answer %q", data)
	var r client.Result
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&r), "answer %q", data)
	require.LessOrEqual(t, len(r.Error), 1024, "the error text is bounded whatever the request quotes")
	return resp.StatusCode, r, resp.Header
}

// Every hostile request to the serving primary is refused with a 4xx JSON
// answer naming a stable code, and changes nothing: the primary's cursor and
// digest, its role generation and producer view, etcd's durable prefix (value
// and revision) and the batch keys are the same before and after. The
// primary keeps serving, and a valid write still succeeds at the end.
func TestHostileRequestsAreRefusedAndChangeNothing(t *testing.T) {
	c := startCluster(t, 1, map[string]any{"tenants": []string{"t", "alpha"}})
	p := c.primary(30 * time.Second)
	ctx := context.Background()
	c.mountSegments(p.URL, 1) // 10.0.0.1:7000, memory, 1 TiB
	// A legitimate but odd segment: its endpoint is 4096 '<', which JSON
	// escapes to six bytes each in a stored payload.
	angle := strings.Repeat("<", 4096)
	r := c.cli.Mount(ctx, p.URL, client.Segment{Endpoint: angle, Name: "angle", Capacity: 1 << 40, Kind: "memory"})
	require.Equal(t, client.OK, r.Outcome, "%+v", r)
	r = c.cli.Put(ctx, p.URL, client.PutRequest{Tenant: "t", Key: "existing", ClientID: "0-1", Size: 4096})
	require.Equal(t, client.OK, r.Outcome, "%+v", r)

	long := strings.Repeat("k", 4097)
	seg := "10.0.0.1:7000"
	rep := func(id uint64, segment string) map[string]any {
		return map[string]any{"id": id, "kind": "memory", "segment": segment, "offset": id * 8, "length": 8, "status": "complete"}
	}
	replicas := func(n int, segment string) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = rep(uint64(i+1), segment)
		}
		return out
	}
	put := func(fields map[string]any) []byte {
		b := map[string]any{"tenant": "t", "key": "new", "client_id": "0-1", "size": 8}
		for k, v := range fields {
			b[k] = v
		}
		return jsonBody(b)
	}
	mount := func(fields map[string]any) []byte {
		b := map[string]any{"endpoint": "10.0.0.9:7000", "name": "n", "capacity": 1 << 20, "kind": "memory"}
		for k, v := range fields {
			b[k] = v
		}
		return jsonBody(b)
	}
	// A valid put followed by whitespace past the body limit, and a body
	// over the limit outright.
	padded := append(put(nil), bytes.Repeat([]byte(" "), 1<<20)...)
	huge := put(map[string]any{"client_id": strings.Repeat("x", 1<<20)})
	const (
		bad      = http.StatusBadRequest
		tooLarge = http.StatusRequestEntityTooLarge
		denied   = http.StatusForbidden
	)

	cases := []hostileCase{
		// keys, tenants and every other string over 4096 bytes
		{name: "put key over 4096 bytes", method: "POST", path: "/v1/objects/put", body: put(map[string]any{"key": long}), status: bad, code: "malformed"},
		{name: "put tenant over 4096 bytes", method: "POST", path: "/v1/objects/put", body: put(map[string]any{"tenant": long}), status: bad, code: "malformed"},
		{name: "put client_id over 4096 bytes", method: "POST", path: "/v1/objects/put",
			body: put(map[string]any{"client_id": long}), status: bad, code: "malformed"},
		{name: "put group_id over 4096 bytes", method: "POST", path: "/v1/objects/put", body: put(map[string]any{"group_id": long}), status: bad, code: "malformed"},
		{name: "put replica segment over 4096 bytes", method: "POST", path: "/v1/objects/put",
			body: put(map[string]any{"replicas": []map[string]any{rep(1, long)}}), status: bad, code: "malformed"},
		{name: "remove key over 4096 bytes", method: "POST", path: "/v1/objects/remove",
			body: jsonBody(map[string]any{"tenant": "t", "key": long}), status: bad, code: "malformed"},
		{name: "remove tenant over 4096 bytes", method: "POST", path: "/v1/objects/remove",
			body: jsonBody(map[string]any{"tenant": long, "key": "existing"}), status: bad, code: "malformed"},
		{name: "get key over 4096 bytes", method: "GET", path: "/v1/objects/get?tenant=t&key=" + long, status: bad, code: "malformed"},
		{name: "get tenant over 4096 bytes", method: "GET", path: "/v1/objects/get?key=existing&tenant=" + long, status: bad, code: "malformed"},
		{name: "mount endpoint over 4096 bytes", method: "POST", path: "/v1/segments/mount",
			body: mount(map[string]any{"endpoint": long}), status: bad, code: "malformed"},
		{name: "mount name over 4096 bytes", method: "POST", path: "/v1/segments/mount", body: mount(map[string]any{"name": long}), status: bad, code: "malformed"},
		{name: "mount file_path over 4096 bytes", method: "POST", path: "/v1/segments/mount",
			body: mount(map[string]any{"kind": "disk", "file_path": long}), status: bad, code: "malformed"},
		{name: "update endpoint over 4096 bytes", method: "POST", path: "/v1/segments/update",
			body: mount(map[string]any{"endpoint": long}), status: bad, code: "malformed"},
		{name: "update name over 4096 bytes", method: "POST", path: "/v1/segments/update",
			body: mount(map[string]any{"endpoint": seg, "name": long}), status: bad, code: "malformed"},
		{name: "unmount endpoint over 4096 bytes", method: "POST", path: "/v1/segments/unmount",
			body: jsonBody(map[string]any{"endpoint": long}), status: bad, code: "malformed"},

		// oversized bodies and entries
		{name: "body over 1 MiB with Content-Length", method: "POST", path: "/v1/objects/put", body: huge, status: tooLarge, code: "too_large"},
		{name: "body over 1 MiB chunked", method: "POST", path: "/v1/objects/put", body: huge, chunked: true, status: tooLarge, code: "too_large"},
		{name: "mount body over 1 MiB chunked", method: "POST", path: "/v1/segments/mount",
			body: mount(map[string]any{"name": strings.Repeat("n", 1<<20)}), chunked: true, status: tooLarge, code: "too_large"},
		{name: "valid put then whitespace past 1 MiB", method: "POST", path: "/v1/objects/put", body: padded, chunked: true, status: tooLarge, code: "too_large"},
		{name: "payload escaped past 512 KiB", method: "POST", path: "/v1/objects/put",
			body: put(map[string]any{"replicas": replicas(200, angle)}), status: tooLarge, code: "too_large"},
		{name: "more than 1024 replicas", method: "POST", path: "/v1/objects/put",
			body: put(map[string]any{"replicas": replicas(1025, seg)}), status: bad, code: "malformed"},
		{name: "replica_count over 16", method: "POST", path: "/v1/objects/put", body: put(map[string]any{"replica_count": 17}), status: bad, code: "malformed"},
		{name: "negative replica_count", method: "POST", path: "/v1/objects/put", body: put(map[string]any{"replica_count": -1}), status: bad, code: "malformed"},

		// malformed JSON, unknown fields, trailing data, invalid values
		{name: "put malformed json", method: "POST", path: "/v1/objects/put", body: []byte(`{"tenant":"t","key":`), status: bad, code: "malformed"},
		{name: "put empty body", method: "POST", path: "/v1/objects/put", body: []byte{}, status: bad, code: "malformed"},
		{name: "put json array", method: "POST", path: "/v1/objects/put", body: []byte(`[1,2]`), status: bad, code: "malformed"},
		{name: "put unknown field", method: "POST", path: "/v1/objects/put", body: put(map[string]any{"admin": true}), status: bad, code: "malformed"},
		{name: "put unknown field with a huge name", method: "POST", path: "/v1/objects/put",
			body: put(map[string]any{strings.Repeat("f", 500_000): 1}), status: bad, code: "malformed"},
		{name: "put trailing data", method: "POST", path: "/v1/objects/put",
			body: append(put(nil), `{"tenant":"t","key":"second","size":1}`...), status: bad, code: "malformed"},
		{name: "put wrong type", method: "POST", path: "/v1/objects/put", body: put(map[string]any{"size": "8"}), status: bad, code: "malformed"},
		{name: "put size overflows uint64", method: "POST", path: "/v1/objects/put",
			body: []byte(`{"tenant":"t","key":"new","size":18446744073709551616}`), status: bad, code: "malformed"},
		{name: "put zero size", method: "POST", path: "/v1/objects/put", body: put(map[string]any{"size": 0}), status: bad, code: "malformed"},
		{name: "put empty key", method: "POST", path: "/v1/objects/put", body: put(map[string]any{"key": ""}), status: bad, code: "malformed"},
		{name: "put replica of unknown kind", method: "POST", path: "/v1/objects/put",
			body: put(map[string]any{"replicas": []map[string]any{{"id": 1, "kind": "tape", "segment": seg, "length": 8,
				"status": "complete"}}}), status: bad, code: "malformed"},
		{name: "put duplicate replica ids", method: "POST", path: "/v1/objects/put",
			body: put(map[string]any{"replicas": []map[string]any{rep(1, seg), rep(1, seg)}}), status: bad, code: "malformed"},
		{name: "put replica offset overflows", method: "POST", path: "/v1/objects/put",
			body: put(map[string]any{"replicas": []map[string]any{{"id": 1, "kind": "memory", "segment": seg,
				"offset": uint64(1<<64 - 1), "length": 8, "status": "complete"}}}), status: bad, code: "malformed"},
		{name: "remove malformed json", method: "POST", path: "/v1/objects/remove", body: []byte(`{"tenant":`), status: bad, code: "malformed"},
		{name: "remove unknown field", method: "POST", path: "/v1/objects/remove",
			body: jsonBody(map[string]any{"tenant": "t", "key": "existing", "force": true}), status: bad, code: "malformed"},
		{name: "remove trailing data", method: "POST", path: "/v1/objects/remove", body: []byte(`{"tenant":"t","key":"existing"} x`), status: bad, code: "malformed"},
		{name: "mount malformed json", method: "POST", path: "/v1/segments/mount", body: []byte(`{"endpoint":"e"`), status: bad, code: "malformed"},
		{name: "mount unknown field", method: "POST", path: "/v1/segments/mount", body: mount(map[string]any{"owner": "x"}), status: bad, code: "malformed"},
		{name: "mount trailing data", method: "POST", path: "/v1/segments/mount", body: append(mount(nil), "null"...), status: bad, code: "malformed"},
		{name: "mount zero capacity", method: "POST", path: "/v1/segments/mount", body: mount(map[string]any{"capacity": 0}), status: bad, code: "malformed"},
		{name: "mount unknown kind", method: "POST", path: "/v1/segments/mount", body: mount(map[string]any{"kind": "tape"}), status: bad, code: "malformed"},
		{name: "mount disk without file_path", method: "POST", path: "/v1/segments/mount",
			body: mount(map[string]any{"kind": "disk"}), status: bad, code: "malformed"},
		{name: "mount without endpoint", method: "POST", path: "/v1/segments/mount", body: mount(map[string]any{"endpoint": ""}), status: bad, code: "malformed"},
		{name: "update malformed json", method: "POST", path: "/v1/segments/update", body: []byte(`{]`), status: bad, code: "malformed"},
		{name: "update unknown field", method: "POST", path: "/v1/segments/update",
			body: mount(map[string]any{"endpoint": seg, "owner": "x"}), status: bad, code: "malformed"},
		{name: "update trailing data", method: "POST", path: "/v1/segments/update",
			body: append(mount(map[string]any{"endpoint": seg}), "{}"...), status: bad, code: "malformed"},
		{name: "update zero capacity", method: "POST", path: "/v1/segments/update",
			body: mount(map[string]any{"endpoint": seg, "capacity": 0}), status: bad, code: "malformed"},
		{name: "update unknown kind", method: "POST", path: "/v1/segments/update",
			body: mount(map[string]any{"endpoint": seg, "kind": "tape"}), status: bad, code: "malformed"},
		{name: "unmount malformed json", method: "POST", path: "/v1/segments/unmount", body: []byte(`"`), status: bad, code: "malformed"},
		{name: "unmount unknown field", method: "POST", path: "/v1/segments/unmount",
			body: jsonBody(map[string]any{"endpoint": seg, "all": true}), status: bad, code: "malformed"},
		{name: "unmount without endpoint", method: "POST", path: "/v1/segments/unmount", body: []byte(`{}`), status: bad, code: "malformed"},

		// tenants outside the configured list
		{name: "put unknown tenant", method: "POST", path: "/v1/objects/put", body: put(map[string]any{"tenant": "mallory"}), status: denied, code: "unknown_tenant"},
		{name: "put empty tenant not listed", method: "POST", path: "/v1/objects/put",
			body: put(map[string]any{"tenant": ""}), status: denied, code: "unknown_tenant"},
		{name: "remove unknown tenant", method: "POST", path: "/v1/objects/remove",
			body: jsonBody(map[string]any{"tenant": "mallory", "key": "existing"}), status: denied, code: "unknown_tenant"},
		{name: "get unknown tenant", method: "GET", path: "/v1/objects/get?tenant=mallory&key=existing", status: denied, code: "unknown_tenant"},

		// unknown operations and methods
		{name: "unknown op under /v1", method: "POST", path: "/v1/objects/delete",
			body: jsonBody(map[string]any{"tenant": "t", "key": "existing"}), status: http.StatusNotFound, code: "unknown_op"},
		{name: "unknown version", method: "POST", path: "/v2/objects/put", body: put(nil), status: http.StatusNotFound, code: "unknown_op"},
		{name: "bare /v1/", method: "GET", path: "/v1/", status: http.StatusNotFound, code: "unknown_op"},
		{name: "trailing slash", method: "POST", path: "/v1/objects/put/", body: put(nil), status: http.StatusNotFound, code: "unknown_op"},
		{name: "GET on a mutation", method: "GET", path: "/v1/objects/put?tenant=t&key=new", status: http.StatusMethodNotAllowed, code: "unknown_op"},
		{name: "DELETE on an object read", method: "DELETE", path: "/v1/objects/get?tenant=t&key=existing", status: http.StatusMethodNotAllowed, code: "unknown_op"},
		{name: "PUT on state", method: "PUT", path: "/v1/state", body: []byte(`{}`), status: http.StatusMethodNotAllowed, code: "unknown_op"},
		{name: "unknown path outside /v1", method: "GET", path: "/admin", status: http.StatusNotFound, code: "unknown_op"},
		{name: "double slash", method: "POST", path: "/v1//objects/put", body: put(nil), status: http.StatusNotFound, code: "unknown_op"},
		{name: "escaped slash", method: "POST", path: "/v1/objects%2Fput", body: put(nil), status: http.StatusNotFound, code: "unknown_op"},
		{name: "dot segments", method: "POST", path: "/v1/x/../objects/put", body: put(nil), status: http.StatusNotFound, code: "unknown_op"},
	}

	cli := c.etcdClient()
	hc := &http.Client{Timeout: 30 * time.Second}
	before := c.view(cli, p)
	require.Equal(t, uint64(3), before.cursor.Seq, "two mounts and a put")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, res, hdr := send(t, hc, p.URL, tc)
			require.Equal(t, tc.status, status, "%+v", res)
			require.Equal(t, client.Failed, res.Outcome, "%+v", res)
			require.Equal(t, tc.code, res.Code, "%+v", res)
			require.NotEmpty(t, res.Error)
			if status == http.StatusMethodNotAllowed {
				require.NotEmpty(t, hdr.Get("Allow"))
			}
			require.Equal(t, before, c.view(cli, p), "nothing changed")
		})
	}

	// The primary kept its term, and valid requests still go through.
	r = c.cli.Put(ctx, p.URL, client.PutRequest{Tenant: "alpha", Key: "after", ClientID: "0-1", Size: 8})
	require.Equal(t, client.OK, r.Outcome, "%+v", r)
	obj, found, err := c.cli.Get(ctx, p.URL, "alpha", "after")
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, uint64(8), obj.Size)
	after := c.view(cli, p)
	require.Equal(t, before.roleGeneration, after.roleGeneration)
	require.Equal(t, before.cursor.Seq+1, after.cursor.Seq)
	require.Equal(t, before.batches+1, after.batches)
}

// Puts refused after the allocator placed their replicas (here: the key
// exists) give the space back: repeating them cannot fill the segments.
func TestRefusedPutsDoNotUseUpSegments(t *testing.T) {
	c := startCluster(t, 1, nil)
	p := c.primary(30 * time.Second)
	ctx := context.Background()
	r := c.cli.Mount(ctx, p.URL, client.Segment{Endpoint: "10.0.0.1:7000", Name: "small", Capacity: 2048, Kind: "memory"})
	require.Equal(t, client.OK, r.Outcome, "%+v", r)
	r = c.cli.Put(ctx, p.URL, client.PutRequest{Tenant: "t", Key: "a", ClientID: "0-1", Size: 1024})
	require.Equal(t, client.OK, r.Outcome, "%+v", r)
	for i := 0; i < 5; i++ {
		r = c.cli.Put(ctx, p.URL, client.PutRequest{Tenant: "t", Key: "a", ClientID: "0-1", Size: 1024})
		require.Equal(t, "object_exists", r.Code, "%+v", r)
	}
	r = c.cli.Put(ctx, p.URL, client.PutRequest{Tenant: "t", Key: "b", ClientID: "0-1", Size: 1024})
	require.Equal(t, client.OK, r.Outcome, "the refused puts left the second half free: %+v", r)
	r = c.cli.Put(ctx, p.URL, client.PutRequest{Tenant: "t", Key: "c", ClientID: "0-1", Size: 1})
	require.Equal(t, "no_capacity", r.Code, "the segment is full now: %+v", r)
	st, err := c.cli.State(ctx, p.URL, true)
	require.NoError(t, err)
	require.Equal(t, 2, st.Objects)
	for _, o := range st.Dump {
		require.Len(t, o.Object.Replicas, 1)
	}
}
