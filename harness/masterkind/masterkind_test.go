package masterkind

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTermForm(t *testing.T) {
	for term, want := range map[string]string{
		`1*return("hold")`: "hold", `return("hold")`: "hold", "1*panic": "panic", "panic": "panic",
		"sleep(60)": "sleep", "1*sleep(5000)": "sleep", "3*return(true)": "value", "return(true)": "value",
		"2*off->1*panic": "chain",
	} {
		assert.Equal(t, want, TermForm(term), term)
	}
}

func TestReferenceHasEveryFailpoint(t *testing.T) {
	k := Reference()
	assert.True(t, k.Can(FailpointCap("anyNameAtAll")))
	own, ok := k.Failpoint("primaryBeforeAppend")
	assert.True(t, ok)
	assert.Equal(t, "primaryBeforeAppend", own)
	assert.Empty(t, k.SkipReason([]Capability{Snapshots, State, TermCap("chain")}))
}

func TestMooncakeLacksWhatUpstreamLacks(t *testing.T) {
	k := Mooncake()
	own, ok := k.Failpoint("primaryBeforeAppend")
	require.True(t, ok)
	assert.Equal(t, "batch_before_txn", own)
	_, ok = k.Failpoint("snapshotBeforeCAS")
	assert.False(t, ok)
	assert.Equal(t, "master mooncake lacks failpoint:snapshotBeforeCAS, snapshots, state",
		k.SkipReason([]Capability{State, Snapshots, FailpointCap("snapshotBeforeCAS"), Snapshots, TermCap("hold")}))
	assert.Empty(t, k.SkipReason([]Capability{FailpointCap("primaryAfterAppend"), TermCap("panic")}))
	assert.Equal(t, "master mooncake lacks failpoint-term:sleep", k.SkipReason([]Capability{TermCap("sleep")}))
}

func TestByName(t *testing.T) {
	k, err := ByName("")
	require.NoError(t, err)
	assert.Equal(t, ReferenceName, k.Name)
	k, err = ByName("mooncake")
	require.NoError(t, err)
	assert.Equal(t, MooncakeName, k.Name)
	_, err = ByName("etcd")
	assert.ErrorContains(t, err, `master kind "etcd": want reference or mooncake`)
}

func TestMooncakeBinary(t *testing.T) {
	t.Setenv(BinaryEnv, "")
	_, err := MooncakeBinary()
	assert.ErrorIs(t, err, ErrNoBinary)
	dir := t.TempDir()
	t.Setenv(BinaryEnv, dir)
	_, err = MooncakeBinary()
	assert.ErrorContains(t, err, "not an executable file")
	t.Setenv(BinaryEnv, dir+"/absent")
	_, err = MooncakeBinary()
	assert.ErrorContains(t, err, "no such file")
}
