package acl

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"hash"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// The ext fields of a signed request.
const (
	FieldAccessKey     = "AccessKey"
	FieldSignature     = "Signature"
	FieldSecurityToken = "SecurityToken"
)

// Credentials sign outgoing requests. The zero value signs nothing.
type Credentials struct {
	AccessKey     string
	SecretKey     string
	SecurityToken string // optional; sent and signed, as Java's client does
}

// Empty reports whether c has no access key, so nothing is signed.
func (c Credentials) Empty() bool { return c.AccessKey == "" }

// Sign adds AccessKey, SecurityToken (if any) and Signature to cmd's ext
// fields, which must be non-nil, signing them with the body.
func (c Credentials) Sign(cmd *protocol.Command) { c.sign(newSigner(c.SecretKey), cmd) }

func (c Credentials) sign(s *signer, cmd *protocol.Command) {
	cmd.ExtFields[FieldAccessKey] = c.AccessKey
	if c.SecurityToken != "" {
		cmd.ExtFields[FieldSecurityToken] = c.SecurityToken
	}
	delete(cmd.ExtFields, FieldSignature)
	cmd.ExtFields[FieldSignature] = s.sign(cmd.ExtFields, cmd.Body, "")
}

// Interceptor returns the client interceptor that signs every request,
// or nothing if c is empty.
func (c Credentials) Interceptor() []remoting.ClientInterceptor {
	if c.Empty() {
		return nil
	}
	s := newSigner(c.SecretKey)
	return []remoting.ClientInterceptor{{Request: func(_ string, cmd *protocol.Command) error {
		c.sign(s, cmd)
		return nil
	}}}
}

// Signature computes Base64(HmacSHA1(secretKey, content)), content being
// the values of ext sorted by key, Signature and the key named skip left
// out, followed by body.
func Signature(secretKey string, ext map[string]string, body []byte, skip string) string {
	return newSigner(secretKey).sign(ext, body, skip)
}

// signer signs with one secret key, keeping keyed HMACs for reuse (keying
// one costs two SHA-1 blocks).
type signer struct{ macs sync.Pool }

func newSigner(secretKey string) *signer {
	key := []byte(secretKey)
	s := &signer{}
	s.macs.New = func() any { return hmac.New(sha1.New, key) }
	return s
}

func (s *signer) sign(ext map[string]string, body []byte, skip string) string {
	var sig [sigLen]byte
	return string(s.sum(&sig, ext, body, skip))
}

// sigLen is the length of a signature: Base64 of a SHA-1.
const sigLen = (sha1.Size + 2) / 3 * 4

// sum writes the signature into dst and returns it, allocating nothing
// (a verifier compares it in place).
func (s *signer) sum(dst *[sigLen]byte, ext map[string]string, body []byte, skip string) []byte {
	bp := contentPool.Get().(*[]byte)
	buf := appendContent((*bp)[:0], ext, skip)
	mac := s.macs.Get().(hash.Hash)
	mac.Reset()
	mac.Write(buf)
	mac.Write(body)
	var sum [sha1.Size]byte
	base64.StdEncoding.Encode(dst[:], mac.Sum(sum[:0]))
	s.macs.Put(mac)
	*bp = buf
	contentPool.Put(bp)
	return dst[:]
}

// appendContent appends the values of ext sorted by key, Signature and
// skip left out. Requests of one kind carry the same keys, so the sorted
// order of the last one seen with as many keys is tried first: if each of
// its keys is in ext (and the counts agree), the sets are equal and no
// sort is needed — the lookups fetch the values anyway. Otherwise the keys
// are sorted and that order remembered.
func appendContent(buf []byte, ext map[string]string, skip string) []byte {
	n := len(ext)
	if _, ok := ext[FieldSignature]; ok {
		n--
	}
	if _, ok := ext[skip]; ok && skip != "" {
		n--
	}
	slot := &keyOrders[n%len(keyOrders)]
	if ko := slot.Load(); ko != nil && len(ko.keys) == n && ko.skip == skip {
		start := len(buf)
		hit := true
		for _, k := range ko.keys {
			v, ok := ext[k]
			if !ok {
				hit = false
				break
			}
			buf = append(buf, v...)
		}
		if hit {
			return buf
		}
		buf = buf[:start]
	}
	keys := make([]string, 0, n)
	for k := range ext {
		if k != FieldSignature && k != skip {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		buf = append(buf, ext[k]...)
	}
	slot.Store(&keyOrder{skip: skip, keys: keys})
	return buf
}

// keyOrder is a sorted key set; never modified once stored.
type keyOrder struct {
	skip string
	keys []string
}

// keyOrders remembers the last sorted key set of each key count (mod its
// size): what a signer or verifier tries before sorting.
var keyOrders [32]atomic.Pointer[keyOrder]

// contentPool holds the buffers the ext field values are joined in.
var contentPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// signatureOK reports whether req's Signature is s's over its fields,
// SecurityToken signed (Java) or not (the official Go client).
func (s *signer) ok(req *protocol.Command) bool {
	got, ok := req.ExtFields[FieldSignature]
	if !ok {
		return false
	}
	var sig [sigLen]byte
	if equal(s.sum(&sig, req.ExtFields, req.Body, ""), got) {
		return true
	}
	if _, has := req.ExtFields[FieldSecurityToken]; has {
		return equal(s.sum(&sig, req.ExtFields, req.Body, FieldSecurityToken), got)
	}
	return false
}

// signatureOK reports whether req is signed with secretKey.
func signatureOK(secretKey string, req *protocol.Command) bool { return newSigner(secretKey).ok(req) }

func equal(a []byte, b string) bool { return subtle.ConstantTimeCompare(a, []byte(b)) == 1 }

// Key is one secret key ready to verify signatures with: its keyed HMACs
// are pooled, so one Key per account serves every request without keying
// a new HMAC (ACL 2.0's users keep one each).
type Key struct{ s *signer }

// NewKey prepares secretKey.
func NewKey(secretKey string) Key { return Key{newSigner(secretKey)} }

// Verify reports whether req's Signature is this key's over its fields and
// body, SecurityToken signed (Java) or not (the official Go client).
func (k Key) Verify(req *protocol.Command) bool { return k.s.ok(req) }
