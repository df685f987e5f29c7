package capi

import (
	"sort"
	"strings"
)

// genders maps the words Meta's parameter builder understands to m or f.
var genders = func() map[string]string {
	m := map[string]string{}
	for _, w := range strings.Fields("m man male boy gentleman guy sir mister mr son father dad daddy papa " +
		"uncle nephew brother husband boyfriend groom widower king prince duke count emperor god lord " +
		"lad fellow chap bloke dude he him his himself") {
		m[w] = "m"
	}
	for _, w := range strings.Fields("f woman female girl lady miss ms mrs madam ma'am daughter mother mom " +
		"mama mommy aunt niece sister wife girlfriend bride widow queen princess duchess countess empress " +
		"goddess maiden lass gal chick dame belle she her hers herself") {
		m[w] = "f"
	}
	return m
}()

// stateList holds US states and Canadian provinces, names written in lower
// case without spaces, each followed by its code.
const stateList = `alabama al alaska ak arizona az arkansas ar california ca colorado co
connecticut ct delaware de florida fl georgia ga hawaii hi idaho id illinois il indiana in
iowa ia kansas ks kentucky ky louisiana la maine me maryland md massachusetts ma michigan mi
minnesota mn mississippi ms missouri mo montana mt nebraska ne nevada nv newhampshire nh
newjersey nj newmexico nm newyork ny northcarolina nc northdakota nd ohio oh oklahoma ok
oregon or pennsylvania pa rhodeisland ri southcarolina sc southdakota sd tennessee tn texas tx
utah ut vermont vt virginia va washington wa westvirginia wv wisconsin wi wyoming wy
ontario on quebec qc britishcolumbia bc alberta ab saskatchewan sk manitoba mb novascotia ns
newbrunswick nb princeedwardisland pe newfoundlandandlabrador nl yukon yt
northwestterritories nt nunavut nu districtofcolumbia dc washingtondc dc`

// countryList holds country names (ISO 3166 short names and common
// variants), lower case without spaces, each followed by its alpha-2 code.
const countryList = `unitedstates us usa us ind in afghanistan af alandislands ax albania al
algeria dz americansamoa as andorra ad angola ao anguilla ai antarctica aq antiguaandbarbuda ag
argentina ar armenia am aruba aw australia au austria at azerbaijan az bahamas bs bahrain bh
bangladesh bd barbados bb belarus by belgium be belize bz benin bj bermuda bm bhutan bt
boliviaplurinationalstateof bo bolivia bo bonairesinteustatinsandsaba bq bosniaandherzegovina ba
botswana bw bouvetisland bv brazil br britishindianoceanterritory io bruneidarussalam bn brunei bn
bulgaria bg burkinafaso bf burundi bi cambodia kh cameroon cm canada ca capeverde cv
caymanislands ky centralafricanrepublic cf chad td chile cl china cn christmasisland cx
cocoskeelingislands cc colombia co comoros km congo cg congothedemocraticrepublicofthe cd
democraticrepublicofthecongo cd cookislands ck costarica cr cotedivoire ci ivorycoast ci
croatia hr cuba cu curacao cw cyprus cy czechrepublic cz denmark dk djibouti dj dominica dm
dominicanrepublic do ecuador ec egypt eg elsalvador sv equatorialguinea gq eritrea er estonia ee
ethiopia et falklandislandsmalvinas fk faroeislands fo fiji fj finland fi france fr
frenchguiana gf frenchpolynesia pf frenchsouthernterritories tf gabon ga gambia gm georgia ge
germany de ghana gh gibraltar gi greece gr greenland gl grenada gd guadeloupe gp guam gu
guatemala gt guernsey gg guinea gn guineabissau gw guyana gy haiti ht
heardislandandmcdonaldislands hm holyseevaticancitystate va vatican va honduras hn hongkong hk
hungary hu iceland is india in indonesia id iranislamicrepublicof ir iran ir iraq iq ireland ie
isleofman im israel il italy it jamaica jm japan jp jersey je jordan jo kazakhstan kz kenya ke
kiribati ki koreademocraticpeoplesrepublicof kp northkorea kp korearepublicof kr southkorea kr
kuwait kw kyrgyzstan kg laopeoplesdemocraticrepublic la laos la latvia lv lebanon lb lesotho ls
liberia lr libya ly liechtenstein li lithuania lt luxembourg lu macao mo
macedoniatheformeryugoslavrepublicof mk macedonia mk madagascar mg malawi mw malaysia my
maldives mv mali ml malta mt marshallislands mh martinique mq mauritania mr mauritius mu
mayotte yt mexico mx micronesiafederatedstatesof fm micronesia fm moldovarepublicof md
moldova md monaco mc mongolia mn montenegro me montserrat ms morocco ma mozambique mz myanmar mm
namibia na nauru nr nepal np netherlands nl newcaledonia nc newzealand nz nicaragua ni niger ne
nigeria ng niue nu norfolkisland nf northernmarianaislands mp norway no oman om pakistan pk
palau pw palestinestateof ps palestine ps panama pa papuanewguinea pg paraguay py peru pe
philippines ph pitcairn pn poland pl portugal pt puertorico pr qatar qa reunion re romania ro
russianfederation ru russia ru rwanda rw saintbarthelemy bl
sainthelenaascensionandtristandacunha sh saintkittsandnevis kn saintlucia lc
saintmartinfrenchpart mf saintpierreandmiquelon pm saintvincentandthegrenadines vc samoa ws
sanmarino sm saotomeandprincipe st saudiarabia sa senegal sn serbia rs seychelles sc
sierraleone sl singapore sg sintmaartenductchpart sx slovakia sk slovenia si solomonislands sb
somalia so southafrica za southgeorgiaandthesouthsandwichislands gs southsudan ss spain es
srilanka lk sudan sd suriname sr svalbardandjanmayen sj eswatini sz swaziland sz sweden se
switzerland ch syrianarabrepublic sy syria sy taiwanprovinceofchina tw taiwan tw tajikistan tj
tanzaniaunitedrepublicof tz tanzania tz thailand th timorleste tl easttimor tl togo tg
tokelau tk tonga to trinidadandtobago tt tunisia tn turkey tr turkiye tr turkmenistan tm
turksandcaicosislands tc tuvalu tv uganda ug ukraine ua unitedarabemirates ae unitedkingdom gb
unitedstatesofamerica us unitedstatesminoroutlyingislands um uruguay uy uzbekistan uz
vanuatu vu venezuelabolivarianrepublicof ve venezuela ve vietnam vn virginislandsbritish vg
virginislandsus vi wallisandfutuna wf westernsahara eh yemen ye zambia zm zimbabwe zw`

// stateCodes and countryCodes map a name to its code; stateNames and
// countryNames list the names in the order a value containing a name is
// searched: longest first, so "westvirginia" wins over "virginia".
var (
	stateCodes, stateNames     = codeTable(stateList)
	countryCodes, countryNames = codeTable(countryList)
)

func codeTable(list string) (map[string]string, []string) {
	f := strings.Fields(list)
	codes := make(map[string]string, len(f)/2)
	names := make([]string, 0, len(f)/2)
	for i := 0; i+1 < len(f); i += 2 {
		codes[f[i]] = f[i+1]
		names = append(names, f[i])
	}
	sort.SliceStable(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	return codes, names
}
