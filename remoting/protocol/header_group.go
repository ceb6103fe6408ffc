package protocol

// DeleteSubscriptionGroupRequestHeader is DELETE_SUBSCRIPTIONGROUP's
// header (Java DeleteSubscriptionGroupRequestHeader).
type DeleteSubscriptionGroupRequestHeader struct {
	GroupName   string // groupName
	CleanOffset bool   // cleanOffset: drop the group's committed offsets too
}

// Encode returns the ext fields.
func (h DeleteSubscriptionGroupRequestHeader) Encode() map[string]string {
	e := extEncoder{}
	e.str("groupName", h.GroupName)
	e.bool("cleanOffset", h.CleanOffset)
	return e
}

// Decode reads the header; groupName is required.
func (h *DeleteSubscriptionGroupRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("DELETE_SUBSCRIPTIONGROUP", ext)
	*h = DeleteSubscriptionGroupRequestHeader{
		GroupName:   d.str("groupName", true),
		CleanOffset: d.bool("cleanOffset", false),
	}
	return d.err
}

// CloneGroupOffsetRequestHeader is CLONE_GROUP_OFFSET's header (Java
// CloneGroupOffsetRequestHeader).
type CloneGroupOffsetRequestHeader struct {
	SrcGroup  string // srcGroup
	DestGroup string // destGroup
	Topic     string // topic (optional: every topic srcGroup has offsets on)
	Offline   bool   // offline: clone even topics the online source does not subscribe to
}

// Encode returns the ext fields.
func (h CloneGroupOffsetRequestHeader) Encode() map[string]string {
	e := extEncoder{}
	e.str("srcGroup", h.SrcGroup)
	e.str("destGroup", h.DestGroup)
	e.optStr("topic", h.Topic)
	e.bool("offline", h.Offline)
	return e
}

// Decode reads the header; srcGroup and destGroup are required.
func (h *CloneGroupOffsetRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("CLONE_GROUP_OFFSET", ext)
	*h = CloneGroupOffsetRequestHeader{
		SrcGroup:  d.str("srcGroup", true),
		DestGroup: d.str("destGroup", true),
		Topic:     d.str("topic", false),
		Offline:   d.bool("offline", false),
	}
	return d.err
}
