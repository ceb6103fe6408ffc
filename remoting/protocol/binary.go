package protocol

import (
	"encoding/binary"
	"fmt"
)

// Language codes of the ROCKETMQ binary header.
var languageCodes = []string{
	0: "JAVA", 1: "CPP", 2: "DOTNET", 3: "PYTHON", 4: "DELPHI", 5: "ERLANG",
	6: "RUBY", 7: "OTHER", 8: "HTTP", 9: "GO", 10: "PHP", 11: "OMS", 12: "RUST", 13: "NODE_JS",
}

func languageCode(s string) byte {
	switch s {
	case "GO":
		return 9
	case "JAVA":
		return 0
	}
	for i, l := range languageCodes {
		if l == s {
			return byte(i)
		}
	}
	return 7 // OTHER
}

// binaryFixed is code(2) language(1) version(2) opaque(4) flag(4) remarkLen(4) extLen(4).
const binaryFixed = 21

func decodeBinaryHeader(b []byte) (*Command, error) {
	return decodeBinaryHeaderLimit(b, 0, true, false)
}

// decodeBinaryHeaderLimit decodes a header, keeping at most maxExt ext
// fields (0: any number); with lazy, a hot request's are left undecoded
// (extraw.go), and with rawAnswers every response's.
func decodeBinaryHeaderLimit(b []byte, maxExt int, lazy, rawAnswers bool) (*Command, error) {
	if len(b) < binaryFixed {
		return nil, fmt.Errorf("%w: binary header of %d bytes", ErrBadHeader, len(b))
	}
	c := &Command{
		Code:    int16(binary.BigEndian.Uint16(b[0:])),
		Version: int16(binary.BigEndian.Uint16(b[3:])),
		Opaque:  int32(binary.BigEndian.Uint32(b[5:])),
		Flag:    int32(binary.BigEndian.Uint32(b[9:])),
	}
	// An unknown code becomes OTHER (Java would make it null).
	if lc := int(b[2]); lc < len(languageCodes) {
		c.Language = languageCodes[lc]
	} else {
		c.Language = "OTHER"
	}
	p := 13
	remarkLen := int(int32(binary.BigEndian.Uint32(b[p:])))
	p += 4
	if remarkLen < 0 || remarkLen > len(b)-p-4 {
		return nil, fmt.Errorf("%w: remark length %d", ErrBadHeader, remarkLen)
	}
	c.Remark = string(b[p : p+remarkLen])
	p += remarkLen
	extLen := int(int32(binary.BigEndian.Uint32(b[p:])))
	p += 4
	if extLen < 0 || extLen != len(b)-p {
		return nil, fmt.Errorf("%w: extFields length %d, %d bytes left", ErrBadHeader, extLen, len(b)-p)
	}
	ext := b[p:]
	if len(ext) == 0 {
		return c, nil
	}
	if keepRaw(c, lazy, rawAnswers) {
		n, err := walkBinaryExt(ext, nil)
		if err != nil {
			return nil, err
		}
		// Over the limit, the map decode below applies it exactly (a
		// repeated key counts once).
		if maxExt == 0 || n <= maxExt {
			c.rawExt, c.rawSer = ext, SerializeRocketMQ
			return c, nil
		}
	}
	tooMany := false
	_, err := walkBinaryExt(ext, func(key, val []byte) {
		if tooMany {
			return
		}
		if c.ExtFields == nil {
			c.ExtFields = make(map[string]string, min(countBinaryFields(ext), 64))
		}
		if maxExt > 0 && len(c.ExtFields) >= maxExt {
			if _, dup := c.ExtFields[string(key)]; !dup {
				tooMany = true
				return
			}
		}
		c.ExtFields[internKey(key)] = string(val)
	})
	if err != nil {
		return nil, err
	}
	if tooMany {
		return nil, tooManyExtFields(c, maxExt)
	}
	return c, nil
}

// walkBinaryExt reads a binary ext section (key length int16, key, value
// length int32, value, repeated), calling fn (when set) with each field in
// order, and returns how many there were.
func walkBinaryExt(ext []byte, fn func(key, val []byte)) (int, error) {
	n := 0
	for len(ext) > 0 {
		if len(ext) < 2 {
			return n, fmt.Errorf("%w: truncated extFields key length", ErrBadHeader)
		}
		// Java reads the key length as a signed short, so a length with
		// the top bit set is an error there; it is one here too.
		kl := int(int16(binary.BigEndian.Uint16(ext)))
		ext = ext[2:]
		if kl < 0 || kl > len(ext)-4 {
			return n, fmt.Errorf("%w: extFields key length %d", ErrBadHeader, kl)
		}
		key := ext[:kl]
		ext = ext[kl:]
		vl := int(int32(binary.BigEndian.Uint32(ext)))
		ext = ext[4:]
		if vl < 0 || vl > len(ext) {
			return n, fmt.Errorf("%w: extFields value length %d", ErrBadHeader, vl)
		}
		if fn != nil {
			fn(key, ext[:vl])
		}
		ext = ext[vl:]
		n++
	}
	return n, nil
}

// countBinaryFields counts the well-formed fields at the start of ext, a
// binary header's ext field section.
func countBinaryFields(ext []byte) int {
	n := 0
	for len(ext) >= 6 {
		kl := int(int16(binary.BigEndian.Uint16(ext)))
		if kl < 0 || kl > len(ext)-6 {
			break
		}
		vl := int(int32(binary.BigEndian.Uint32(ext[2+kl:])))
		if vl < 0 || vl > len(ext)-6-kl {
			break
		}
		ext = ext[6+kl+vl:]
		n++
	}
	return n
}

func appendBinaryHeader(dst []byte, c *Command) ([]byte, error) {
	lang := c.Language
	if lang == "" {
		lang = LanguageGo
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(c.Code))
	dst = append(dst, languageCode(lang))
	dst = binary.BigEndian.AppendUint16(dst, uint16(c.Version))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Opaque))
	dst = binary.BigEndian.AppendUint32(dst, uint32(c.Flag))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(c.Remark)))
	dst = append(dst, c.Remark...)
	lenAt := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	var err error
	for k, v := range c.Fields() {
		if dst, err = appendBinaryField(dst, k, v); err != nil {
			return dst, err
		}
	}
	for _, f := range c.MoreExt {
		if dst, err = appendBinaryField(dst, f.Key, f.Value); err != nil {
			return dst, err
		}
	}
	binary.BigEndian.PutUint32(dst[lenAt:], uint32(len(dst)-lenAt-4))
	return dst, nil
}

func appendBinaryField(dst []byte, k, v string) ([]byte, error) {
	if len(k) > 0x7FFF {
		return dst, fmt.Errorf("protocol: extFields key of %d bytes", len(k))
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(k)))
	dst = append(dst, k...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
	return append(dst, v...), nil
}
