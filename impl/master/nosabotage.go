//go:build !sabotage

package master

// sabotageAckWithoutAppend is never true outside a sabotage build.
func sabotageAckWithoutAppend() bool { return false }
