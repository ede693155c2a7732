package mooncake

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/client"
	wire "github.com/oplogha/oplogha/impl/contract/cororpc"
)

func TestHealthFromUpstream(t *testing.T) {
	for _, c := range []struct {
		body    string
		role    string
		serving bool
	}{
		{`{"status":"ok","role":"leader","ha_state":"serving","service_ready":true,"leader_address":"127.0.0.1:5","view_version":3}`, "primary", true},
		{`{"status":"ok","role":"leader","ha_state":"leader_warmup","service_ready":false}`, "primary", false},
		{`{"status":"ok","role":"standby","ha_state":"starting","service_ready":false}`, "starting", false},
		{`{"status":"ok","role":"standby","ha_state":"catching_up","service_ready":false}`, "standby", false},
		{`{"status":"ok","role":"standby","ha_state":"standby","service_ready":false}`, "standby", false},
	} {
		var b healthBody
		require.NoError(t, json.Unmarshal([]byte(c.body), &b))
		h := HealthFrom("master-2", b)
		assert.Equal(t, c.role, h.Role, c.body)
		assert.Equal(t, c.serving, h.Serving, c.body)
		assert.Equal(t, "master-2", h.NodeID)
	}
	var b healthBody
	require.NoError(t, json.Unmarshal([]byte(`{"role":"leader","ha_state":"serving","service_ready":true,"leader_address":"127.0.0.1:5","view_version":3}`), &b))
	h := HealthFrom("m", b)
	assert.Equal(t, "127.0.0.1:5", h.Leader)
	assert.Equal(t, uint64(3), h.ProducerView)
}

func TestOutcomeOfACall(t *testing.T) {
	assert.Equal(t, client.OK, result(nil).Outcome)
	r := result(wire.ObjectAlreadyExists)
	assert.Equal(t, client.Failed, r.Outcome, "the master answered no: nothing happened")
	assert.Equal(t, "OBJECT_ALREADY_EXISTS", r.Code)
	r = result(errors.New("cororpc: PutEnd: read: connection reset"))
	assert.Equal(t, client.Unknown, r.Outcome, "no answer: it may have happened")
}

func TestParseClientID(t *testing.T) {
	id, err := ParseClientID("0-7")
	require.NoError(t, err)
	assert.Equal(t, wire.UUID{First: 0, Second: 7}, id)
	id, err = ParseClientID("")
	require.NoError(t, err)
	assert.Equal(t, wire.UUID{}, id)
	_, err = ParseClientID("7")
	assert.ErrorContains(t, err, "want <first>-<second>")
	_, err = ParseClientID("a-1")
	assert.Error(t, err)
}
