package app

// wake tells the delivery runner that events were queued.
func (s *Service) wake() {
	if s.notify != nil {
		s.notify.Wake()
	}
}
