package snapshot

import "github.com/oplogha/oplogha/impl/contract"

// Envelope constants: the contract's (contract.EnvelopeMagic, …).
const (
	EnvelopeMagic         = contract.EnvelopeMagic
	EnvelopeSchemaVersion = contract.EnvelopeSchemaVersion
	PayloadCodecVersion   = contract.PayloadCodecVersion
	HeaderSize            = contract.EnvelopeHeaderSize
)

// Header is the payload envelope (RFC "Payload Envelope"), the contract's
// record (contract.EnvelopeHeader, with its Marshal).
type Header = contract.EnvelopeHeader

// ParseHeader decodes and checks a header: magic, versions, algorithm, its
// own CRC, and a consistent cursor (contract.ParseEnvelopeHeader).
func ParseHeader(b []byte) (Header, error) { return contract.ParseEnvelopeHeader(b) }
