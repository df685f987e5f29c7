package qualify

// labels names each reason code in a few words, per language, where a list
// or a table names a reason without its evidence (the dashboard's learning
// card); Message is the sentence with the evidence.
var labels = map[string][2]string{ // code -> {en, tr}
	CodeHoneypot:         {"Hidden trap field filled in", "Gizli tuzak alanı doldurulmuş"},
	CodeDuplicate:        {"Repeat of an earlier lead", "Önceki bir talebin tekrarı"},
	CodeTokenForged:      {"Form not from this site", "Form bu siteden değil"},
	CodeTokenReplayed:    {"Form token used twice", "Form anahtarı iki kez kullanılmış"},
	CodeTokenExpired:     {"Page open a long time", "Sayfa uzun süre açık kalmış"},
	CodeFillTooFast:      {"Filled in too fast", "Çok hızlı doldurulmuş"},
	CodeFillTimeMissing:  {"Fill time unknown", "Doldurma süresi bilinmiyor"},
	CodePhoneInvalid:     {"Phone number not valid", "Telefon numarası geçersiz"},
	CodePhonePattern:     {"Made-up phone number", "Uydurma telefon numarası"},
	CodePhoneFictional:   {"Phone number for films", "Filmler için ayrılmış numara"},
	CodePhonePremium:     {"Premium-rate phone line", "Ücretli (premium) hat"},
	CodePhoneBusiness:    {"Company phone line", "Kurumsal telefon hattı"},
	CodePhoneMissing:     {"No phone or e-mail", "Telefon ya da e-posta yok"},
	CodeNoValidContact:   {"No usable contact", "Kullanılabilir iletişim yok"},
	CodeEmailInvalid:     {"Impossible e-mail address", "Geçersiz e-posta adresi"},
	CodeEmailDisposable:  {"Disposable e-mail address", "Tek kullanımlık e-posta"},
	CodeTestEntry:        {"A test entry", "Deneme girişi"},
	CodeGibberish:        {"Typed without meaning", "Anlamsız giriş"},
	CodeVendorPitch:      {"A sales pitch", "Satış teklifi"},
	CodeJobApplication:   {"A job application", "İş başvurusu"},
	CodeMessageHasLink:   {"Link in the message", "Mesajda bağlantı"},
	CodeMostlyLinks:      {"Message mostly links", "Mesaj çoğunlukla bağlantı"},
	CodePriceOnly:        {"Only asks for a price", "Yalnızca fiyat soruyor"},
	CodeNoMessage:        {"Says nothing", "Bir şey yazmamış"},
	CodeEvidenceWhatsApp: {"Replied on WhatsApp", "WhatsApp'tan yanıt verdi"},
	CodeEvidenceCall:     {"A call took place", "Görüşme yapıldı"},
	CodeOwnerCustomer:    {"You said: real customer", "Siz: gerçek müşteri"},
	CodeOwnerJunk:        {"You said: junk", "Siz: çöp"},
	CodeCRMQualified:     {"The CRM met the person", "CRM kişiyle görüştü"},
	CodeModelRequest:     {"Reads like a request", "Talep gibi okunuyor"},
	CodeModelOffer:       {"Reads like an offer to you", "Size teklif gibi okunuyor"},
	CodeModelJob:         {"Reads like someone seeking work", "İş arayan biri gibi okunuyor"},
	CodeModelNonsense:    {"Reads as nonsense", "Anlamsız okunuyor"},
	CodeServiceNamed:     {"Names a service you sell", "Sattığınız hizmeti anıyor"},
	CodeNoEvidence:       {"No concrete request yet", "Henüz somut talep yok"},
	CodeTextModel:        {"Like leads you judged", "Değerlendirdiğiniz taleplere benziyor"},
}

// Label names a reason code in a few words in lang ("en" or "tr"; anything
// else gives English). An unknown code gives the code itself.
func Label(code, lang string) string {
	l, ok := labels[code]
	if !ok {
		return code
	}
	if lang == "tr" {
		return l[1]
	}
	return l[0]
}
