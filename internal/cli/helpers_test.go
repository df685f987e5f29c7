package cli_test

import "github.com/cleanads/cleanads/internal/model"

func modelLeadID(s string) model.LeadID { return model.LeadID(s) }

func hashKey(s string) string { return model.HashAPIKey(s) }
