package auth

// TopicNeed is a need of action a on topic name.
func TopicNeed(name string, a Action) Need { return topicNeed(name, a) }

// GroupNeed is a need of action a on consumer group name.
func GroupNeed(name string, a Action) Need { return groupNeed(name, a) }

// CheckAccess decides a request of a protocol that signs otherwise than
// remoting (the gRPC door's MQv2-HMAC-SHA1 over its date), with Check's
// users and ACLs and in its order: accessKey signed it ("" when
// unsigned), verify reports whether its signature is that of a secret
// key, and needs are what it asks. nil or an *Error.
func (m *Manager) CheckAccess(remote, accessKey string, verify func(secretKey string) bool, needs []Need) error {
	s := m.current()
	ak := accessKey
	if m.cfg.AuthenticationEnabled {
		if ak == "" {
			return refuse("username cannot be null.")
		}
		u := s.users[ak]
		switch {
		case u == nil:
			return refuse("User:%s is not found.", ak)
		case u.info.UserStatus == Disabled:
			return refuse("User:%s is disabled.", ak)
		case !verify(u.info.Password):
			return refuse("check signature failed.")
		}
	}
	if !m.cfg.AuthorizationEnabled {
		return nil
	}
	return s.authorize(ak, remote, needs)
}
