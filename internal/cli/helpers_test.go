package cli_test

import "github.com/cleanads/cleanads/internal/model"

func modelLeadID(s string) model.LeadID { return model.LeadID(s) }
