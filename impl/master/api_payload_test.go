package master

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/state"
)

// A client's put carries everything upstream's PUT_END payload does: its
// JSON body decodes into the request, and the entry the master writes
// decodes back to exactly that object.
func TestPutRequestCarriesTheWholePayload(t *testing.T) {
	body := `{"tenant":"t","key":"k","client_id":"18446744073709551615-7","size":100,
		"group_id":"g","data_type":3,"hard_pinned":true,"replicas":[
		{"id":1,"kind":"memory","segment":"m:1","offset":4096,"length":100,"status":"complete","protocol":"rdma"},
		{"id":2,"kind":"nof","segment":"n:1","offset":8,"length":100,"status":"processing","protocol":"nvmeof"},
		{"id":3,"kind":"disk","file_path":"/d/x","length":100,"status":"initialized"},
		{"id":4,"kind":"local_disk","client_id":"5-6","segment":"l:1","length":100,"status":"failed"},
		{"id":5,"kind":"dfs","file_path":"/dfs/x","offset":3,"length":100,"aligned_size":4096,"shard_idx":-2,"status":"removed"}]}`
	var req PutRequest
	require.NoError(t, decodeBody(httptest.NewRequest("POST", "/v1/objects/put", strings.NewReader(body)), &req))
	require.NoError(t, req.check())
	want := state.Object{ClientID: state.UUID{First: 1<<64 - 1, Second: 7}, Size: 100, GroupID: "g", DataType: 3, HardPinned: true, Replicas: []state.Replica{
		{ID: 1, Kind: state.ReplicaMemory, Segment: "m:1", Offset: 4096, Length: 100, Status: state.ReplicaComplete, Protocol: "rdma"},
		{ID: 2, Kind: state.ReplicaNoF, Segment: "n:1", Offset: 8, Length: 100, Status: state.ReplicaProcessing, Protocol: "nvmeof"},
		{ID: 3, Kind: state.ReplicaDisk, FilePath: "/d/x", Length: 100, Status: state.ReplicaInitialized},
		{ID: 4, Kind: state.ReplicaLocalDisk, ClientID: state.UUID{First: 5, Second: 6}, Segment: "l:1", Length: 100, Status: state.ReplicaFailed},
		{ID: 5, Kind: state.ReplicaDFS, FilePath: "/dfs/x", Offset: 3, Length: 100, AlignedSize: 4096, ShardIdx: -2, Status: state.ReplicaRemoved},
	}}
	obj := state.Object{ClientID: req.ClientID, Size: req.Size, Replicas: req.Replicas, GroupID: req.GroupID, DataType: req.DataType, HardPinned: req.HardPinned}
	require.Equal(t, want, obj)
	got, err := state.DecodeObject(state.PutEnd(req.Tenant, req.Key, obj).Payload)
	require.NoError(t, err)
	require.Equal(t, want, got)

	for name, bad := range map[string]string{
		"client id not a UUID":     `{"tenant":"t","key":"k","client_id":"client-1","size":1}`,
		"client id with a sign":    `{"tenant":"t","key":"k","client_id":"+1-2","size":1}`,
		"data type over a byte":    `{"tenant":"t","key":"k","size":1,"data_type":256}`,
		"replica client id broken": `{"tenant":"t","key":"k","size":1,"replicas":[{"id":1,"kind":"local_disk","client_id":"x","length":1,"status":"complete"}]}`,
	} {
		var req PutRequest
		err := decodeBody(httptest.NewRequest("POST", "/v1/objects/put", strings.NewReader(bad)), &req)
		if err == nil {
			err = req.check()
		}
		require.ErrorIs(t, err, state.ErrMalformed, name)
	}
}

// Tenant "" is tenant "default" in the state, so the tenants setting
// treats them as one.
func TestConfiguredTenantsTakeTheDefaultTenantEitherWay(t *testing.T) {
	m := &Master{cfg: Config{Tenants: []string{"default"}}}
	require.NoError(t, m.checkRef(ObjectRef{Tenant: "", Key: "k"}))
	require.NoError(t, m.checkRef(ObjectRef{Tenant: "default", Key: "k"}))
	require.ErrorIs(t, m.checkRef(ObjectRef{Tenant: "other", Key: "k"}), errUnknownTenant)
	m.cfg.Tenants = []string{""}
	require.NoError(t, m.checkRef(ObjectRef{Tenant: "default", Key: "k"}))
}
