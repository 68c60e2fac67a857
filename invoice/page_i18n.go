package invoice

import (
	"strconv"
	"strings"
)

// PageStrings are the texts of the payment page in one language, and how
// that language writes numbers, money and dates. Texts in braces are
// filled in: {shop}, {amount}, {symbol}, {address}, {network}, {min},
// {percent}; the formats use {n}, {amount}, {symbol}, {day}, {month},
// {year} and {time}. Texts are plain text, never HTML.
//
// The page has built-in translations (PageStringsFor); WithPageStrings
// changes one language or adds one.
type PageStrings struct {
	Lang     string // BCP 47 tag, for <html lang> ("en", "pt-BR")
	LangName string // the language's own name, for the switch ("Deutsch")

	DecimalMark   string // "." or ","
	GroupMark     string // between groups of three digits: ",", ".", a (narrow) no-break space
	PercentFormat string // "{n}%", "{n} %", "%{n}"
	MoneyFormat   string // where a currency symbol goes: "{symbol}{amount}", "{amount} {symbol}"
	DateFormat    string // "{year}-{month}-{day} {time}" ({time} is "15:04 UTC")

	Title          string // the page's title without a shop name
	PayTo          string // "Pay {shop}": the title with one
	LanguageLabel  string
	TotalLabel     string
	AmountLabel    string // above the amount in the coin: "Send exactly"
	FiatLabel      string // "≈ {amount}" (amount with its currency)
	NetworkLabel   string
	NetworkNote    string // "Send {symbol} on the {network} network only."
	AddressLabel   string
	Copy           string // a copy button's visible text
	CopyAmount     string // its accessible name, by what it copies
	CopyAddress    string
	CopyID         string
	CopyTx         string
	Copied         string
	MinimumNote    string // "Send at least {min} {symbol}; less is lost."
	QRToggle       string // the switch between the QR code with and without the amount
	QRNoAmount     string // under the QR code without the amount
	QRAlt          string // "QR code: pay {amount} {symbol} to {address}"
	QRAddressAlt   string // "QR code of the address {address}, without amount"
	OpenWallet     string
	QuoteLeft      string // before the time the rate is held
	ExpiryLeft     string // before the time the invoice has left
	PaidLabel      string
	PendingLabel   string
	RemainingLabel string
	ProgressText   string // "{percent} paid"
	Return         string
	Refresh        string
	NoScript       string
	Offline        string // while the page cannot reach the server
	Print          string
	ReceiptHeading string
	ShopLabel      string
	ItemLabel      string
	InvoiceLabel   string
	DateLabel      string
	PaymentsLabel  string
	TxLabel        string
	Unconfirmed    string // beside a payment not yet confirmed

	// Headlines, by where the invoice stands.
	New, NewPartial, Updating, Processing, Settled, Expired, Invalid string
	// What the customer should know, and what happens next.
	UpdatingNote, ProcessingNote, DoNotSend, AlreadySent string
	WrongCoin, PaidLate, PaidOver, ExpiredPartial        string

	// The customer's choice of coin (an invoice with Coins).
	Choose        string // the headline while the customer chooses
	ChooseNote    string // under it: the address is made for the coin chosen
	SwitchNote    string // under it when switching: the old address still counts
	PayWith       string // above the coins
	ChangeCoin    string // the link to the coins, to switch
	CurrentCoin   string // beside the coin chosen last
	BackToPayment string // leaves the coins for the coin chosen last
	ChooseFailed  string // the coin could not be set up: try again
}

// DefaultPageStrings returns the page's English texts.
func DefaultPageStrings() PageStrings { return builtinStrings[0] }

// PageStringsFor returns the built-in translation for lang, a BCP 47 tag
// ("de", "de-CH", "pt-BR", "zh-Hans-CN"), matched by its primary language,
// and whether there is one. The built-in languages are English, German,
// French, Spanish, Portuguese (Brazil), Italian, Dutch, Turkish, Russian,
// Chinese (simplified) and Japanese.
func PageStringsFor(lang string) (PageStrings, bool) {
	base := primary(lang)
	for _, s := range builtinStrings {
		if primary(s.Lang) == base {
			return s, true
		}
	}
	return PageStrings{}, false
}

// merge fills s's empty fields from def.
func (s PageStrings) merge(def PageStrings) PageStrings {
	out := def
	for i, f := range s.fields() {
		if *f != "" {
			*out.fields()[i] = *f
		}
	}
	return out
}

// fields returns pointers to every field of s, in declaration order.
func (s *PageStrings) fields() []*string {
	return []*string{
		&s.Lang, &s.LangName, &s.DecimalMark, &s.GroupMark, &s.PercentFormat, &s.MoneyFormat, &s.DateFormat,
		&s.Title, &s.PayTo, &s.LanguageLabel, &s.TotalLabel, &s.AmountLabel, &s.FiatLabel, &s.NetworkLabel,
		&s.NetworkNote, &s.AddressLabel, &s.Copy, &s.CopyAmount, &s.CopyAddress, &s.CopyID, &s.CopyTx, &s.Copied,
		&s.MinimumNote, &s.QRToggle, &s.QRNoAmount, &s.QRAlt, &s.QRAddressAlt, &s.OpenWallet, &s.QuoteLeft,
		&s.ExpiryLeft, &s.PaidLabel, &s.PendingLabel, &s.RemainingLabel, &s.ProgressText, &s.Return, &s.Refresh,
		&s.NoScript, &s.Offline, &s.Print, &s.ReceiptHeading, &s.ShopLabel, &s.ItemLabel, &s.InvoiceLabel,
		&s.DateLabel, &s.PaymentsLabel, &s.TxLabel, &s.Unconfirmed,
		&s.New, &s.NewPartial, &s.Updating, &s.Processing, &s.Settled, &s.Expired, &s.Invalid,
		&s.UpdatingNote, &s.ProcessingNote, &s.DoNotSend, &s.AlreadySent,
		&s.WrongCoin, &s.PaidLate, &s.PaidOver, &s.ExpiredPartial,
		&s.Choose, &s.ChooseNote, &s.SwitchNote, &s.PayWith, &s.ChangeCoin, &s.CurrentCoin, &s.BackToPayment,
		&s.ChooseFailed,
	}
}

// primary is the primary language subtag of a BCP 47 tag, lower case:
// "pt" for "pt-BR", "" for text that is not one.
func primary(tag string) string {
	p, _, _ := strings.Cut(tag, "-")
	p, _, _ = strings.Cut(p, "_")
	if len(p) < 2 || len(p) > 8 {
		return ""
	}
	for i := 0; i < len(p); i++ {
		if c := p[i] | 0x20; c < 'a' || c > 'z' {
			return ""
		}
	}
	return strings.ToLower(p)
}

// maxAcceptLanguage bounds how much of an Accept-Language header is read:
// real ones are a few dozen bytes.
const maxAcceptLanguage = 512

// negotiate picks, among the page's languages (by primary subtag), the one
// the query's lang parameter names, else the one the Accept-Language header
// prefers (by quality, then order), else def. It returns an index into
// langs.
func negotiate(langs []PageStrings, query, accept string, def int) int {
	find := func(tag string) int {
		p := primary(tag)
		if p == "" {
			return -1
		}
		for i := range langs {
			if primary(langs[i].Lang) == p {
				return i
			}
		}
		return -1
	}
	if i := find(query); i >= 0 {
		return i
	}
	if len(accept) > maxAcceptLanguage {
		accept = accept[:maxAcceptLanguage]
	}
	best, bestQ := def, 0.0
	for n, part := range strings.Split(accept, ",") {
		if n >= 32 {
			break
		}
		tag, params, _ := strings.Cut(part, ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || f < 0 || f > 1 {
				continue
			}
			q = f
		}
		if q <= bestQ {
			continue
		}
		if i := find(strings.TrimSpace(tag)); i >= 0 {
			best, bestQ = i, q
		}
	}
	return best
}

const nbsp, nnbsp = "\u00a0", "\u202f"

// builtinStrings are the built-in translations; English first.
var builtinStrings = []PageStrings{
	{
		Lang: "en", LangName: "English",
		DecimalMark: ".", GroupMark: ",", PercentFormat: "{n}%", MoneyFormat: "{symbol}{amount}",
		DateFormat:     "{year}-{month}-{day} {time}",
		Title:          "Payment",
		PayTo:          "Pay {shop}",
		LanguageLabel:  "Language",
		TotalLabel:     "Total",
		AmountLabel:    "Send exactly",
		FiatLabel:      "≈ {amount}",
		NetworkLabel:   "Network",
		NetworkNote:    "Send {symbol} on the {network} network only.",
		AddressLabel:   "Address",
		Copy:           "Copy",
		CopyAmount:     "Copy amount",
		CopyAddress:    "Copy address",
		CopyID:         "Copy invoice ID",
		CopyTx:         "Copy transaction ID",
		Copied:         "Copied",
		MinimumNote:    "Send at least {min} {symbol}; less is lost.",
		QRToggle:       "Amount in QR code",
		QRNoAmount:     "This code holds the address only: enter the amount in your wallet.",
		QRAlt:          "QR code: pay {amount} {symbol} to {address}",
		QRAddressAlt:   "QR code of the address {address}, without amount",
		OpenWallet:     "Open in wallet",
		QuoteLeft:      "Rate held for",
		ExpiryLeft:     "Time left",
		PaidLabel:      "Received",
		PendingLabel:   "Awaiting confirmation",
		RemainingLabel: "Remaining",
		ProgressText:   "{percent} paid",
		Return:         "Back to the shop",
		Refresh:        "Refresh",
		NoScript:       "Without JavaScript this page does not update by itself: reload it to see the current state.",
		Offline:        "Connection lost. Retrying…",
		Print:          "Print receipt",
		ReceiptHeading: "Receipt",
		ShopLabel:      "Shop",
		ItemLabel:      "Order",
		InvoiceLabel:   "Invoice ID",
		DateLabel:      "Date",
		PaymentsLabel:  "Payments",
		TxLabel:        "Transaction",
		Unconfirmed:    "unconfirmed",
		New:            "Waiting for your payment",
		NewPartial:     "Partly paid: please send the remainder",
		Updating:       "Updating the amount",
		Processing:     "Payment received",
		Settled:        "Paid in full. Thank you!",
		Expired:        "This invoice has expired",
		Invalid:        "This invoice was cancelled",
		UpdatingNote:   "The exchange rate is being refreshed. Please wait a moment before you pay.",
		ProcessingNote: "Waiting for confirmation on the network. You can close this page; the shop is notified.",
		DoNotSend:      "Do not send any payment to this address.",
		AlreadySent:    "Already sent a payment? Contact the shop and quote this invoice ID.",
		WrongCoin:      "A payment arrived in a coin this invoice does not accept. It does not count toward the price; the shop will review it and contact you.",
		PaidLate:       "A payment arrived after the invoice ended. It is recorded; the shop will contact you about your order or a refund.",
		PaidOver:       "You sent more than asked. The shop will contact you about the excess.",
		ExpiredPartial: "Part of the price arrived before the invoice expired. The shop will contact you to complete the order or refund you.",
		Choose:         "Choose how to pay",
		ChooseNote:     "Pick a coin. Its payment address is made when you choose.",
		SwitchNote:     "Each coin has its own address. A payment already sent to another one still counts.",
		PayWith:        "Pay with",
		ChangeCoin:     "Change coin",
		CurrentCoin:    "current",
		BackToPayment:  "Back to payment",
		ChooseFailed:   "This coin could not be set up just now. Please try again or choose another.",
	},
	{
		Lang: "de", LangName: "Deutsch",
		DecimalMark: ",", GroupMark: ".", PercentFormat: "{n}" + nbsp + "%", MoneyFormat: "{amount}" + nbsp + "{symbol}",
		DateFormat:     "{day}.{month}.{year}, {time}",
		Title:          "Zahlung",
		PayTo:          "Zahlung an {shop}",
		LanguageLabel:  "Sprache",
		TotalLabel:     "Gesamt",
		AmountLabel:    "Exakter Betrag",
		FiatLabel:      "≈ {amount}",
		NetworkLabel:   "Netzwerk",
		NetworkNote:    "{symbol} nur über das {network}-Netzwerk senden.",
		AddressLabel:   "Adresse",
		Copy:           "Kopieren",
		CopyAmount:     "Betrag kopieren",
		CopyAddress:    "Adresse kopieren",
		CopyID:         "Rechnungsnummer kopieren",
		CopyTx:         "Transaktions-ID kopieren",
		Copied:         "Kopiert",
		MinimumNote:    "Mindestens {min} {symbol} senden; kleinere Beträge gehen verloren.",
		QRToggle:       "Betrag im QR-Code",
		QRNoAmount:     "Dieser Code enthält nur die Adresse: Geben Sie den Betrag in Ihrer Wallet ein.",
		QRAlt:          "QR-Code: {amount} {symbol} an {address} zahlen",
		QRAddressAlt:   "QR-Code der Adresse {address}, ohne Betrag",
		OpenWallet:     "In Wallet öffnen",
		QuoteLeft:      "Kurs gesichert für",
		ExpiryLeft:     "Verbleibende Zeit",
		PaidLabel:      "Erhalten",
		PendingLabel:   "Wartet auf Bestätigung",
		RemainingLabel: "Offen",
		ProgressText:   "{percent} bezahlt",
		Return:         "Zurück zum Shop",
		Refresh:        "Aktualisieren",
		NoScript:       "Ohne JavaScript aktualisiert sich diese Seite nicht selbst: Laden Sie sie neu, um den aktuellen Stand zu sehen.",
		Offline:        "Verbindung unterbrochen. Neuer Versuch …",
		Print:          "Beleg drucken",
		ReceiptHeading: "Zahlungsbeleg",
		ShopLabel:      "Händler",
		ItemLabel:      "Bestellung",
		InvoiceLabel:   "Rechnungsnummer",
		DateLabel:      "Datum",
		PaymentsLabel:  "Zahlungen",
		TxLabel:        "Transaktion",
		Unconfirmed:    "unbestätigt",
		New:            "Warten auf Ihre Zahlung",
		NewPartial:     "Teilweise bezahlt: Bitte senden Sie den Rest",
		Updating:       "Betrag wird aktualisiert",
		Processing:     "Zahlung eingegangen",
		Settled:        "Vollständig bezahlt. Vielen Dank!",
		Expired:        "Diese Rechnung ist abgelaufen",
		Invalid:        "Diese Rechnung wurde storniert",
		UpdatingNote:   "Der Wechselkurs wird gerade aktualisiert. Bitte warten Sie einen Moment, bevor Sie zahlen.",
		ProcessingNote: "Wartet auf Bestätigung im Netzwerk. Sie können diese Seite schließen; der Shop wird benachrichtigt.",
		DoNotSend:      "Senden Sie keine Zahlung mehr an diese Adresse.",
		AlreadySent:    "Schon bezahlt? Wenden Sie sich an den Shop und nennen Sie diese Rechnungsnummer.",
		WrongCoin:      "Eine Zahlung ist in einer Kryptowährung eingegangen, die diese Rechnung nicht annimmt. Sie wird nicht angerechnet; der Shop prüft sie und meldet sich bei Ihnen.",
		PaidLate:       "Eine Zahlung ist nach Ablauf der Rechnung eingegangen. Sie ist erfasst; der Shop meldet sich wegen Ihrer Bestellung oder einer Erstattung.",
		PaidOver:       "Sie haben mehr gesendet als verlangt. Der Shop meldet sich wegen des Mehrbetrags bei Ihnen.",
		ExpiredPartial: "Ein Teil des Betrags ist vor Ablauf der Rechnung eingegangen. Der Shop meldet sich, um die Bestellung abzuschließen oder Ihnen den Betrag zu erstatten.",
		Choose:         "Womit möchten Sie zahlen?",
		ChooseNote:     "Wählen Sie eine Kryptowährung. Die Zahlungsadresse wird bei der Auswahl erstellt.",
		SwitchNote:     "Jede Kryptowährung hat ihre eigene Adresse. Eine bereits an eine andere gesendete Zahlung zählt weiterhin.",
		PayWith:        "Zahlen mit",
		ChangeCoin:     "Währung wechseln",
		CurrentCoin:    "aktuell",
		BackToPayment:  "Zurück zur Zahlung",
		ChooseFailed:   "Diese Währung ist gerade nicht verfügbar. Bitte versuchen Sie es erneut oder wählen Sie eine andere.",
	},
	{
		Lang: "fr", LangName: "Français",
		DecimalMark: ",", GroupMark: nnbsp, PercentFormat: "{n}" + nnbsp + "%", MoneyFormat: "{amount}" + nbsp + "{symbol}",
		DateFormat:     "{day}/{month}/{year} {time}",
		Title:          "Paiement",
		PayTo:          "Payer {shop}",
		LanguageLabel:  "Langue",
		TotalLabel:     "Montant total",
		AmountLabel:    "Montant exact à envoyer",
		FiatLabel:      "≈ {amount}",
		NetworkLabel:   "Réseau",
		NetworkNote:    "Envoyez vos {symbol} uniquement via le réseau {network}.",
		AddressLabel:   "Adresse",
		Copy:           "Copier",
		CopyAmount:     "Copier le montant",
		CopyAddress:    "Copier l’adresse",
		CopyID:         "Copier le numéro de facture",
		CopyTx:         "Copier l’identifiant de transaction",
		Copied:         "Copié",
		MinimumNote:    "Envoyez au moins {min} {symbol}" + nnbsp + "; un montant inférieur est perdu.",
		QRToggle:       "Montant dans le QR code",
		QRNoAmount:     "Ce code ne contient que l’adresse" + nbsp + ": saisissez le montant dans votre portefeuille.",
		QRAlt:          "QR code" + nbsp + ": payer {amount} {symbol} à {address}",
		QRAddressAlt:   "QR code de l’adresse {address}, sans montant",
		OpenWallet:     "Ouvrir dans le portefeuille",
		QuoteLeft:      "Taux garanti pendant",
		ExpiryLeft:     "Temps restant",
		PaidLabel:      "Reçu",
		PendingLabel:   "En attente de confirmation",
		RemainingLabel: "Reste à payer",
		ProgressText:   "{percent} payé",
		Return:         "Retour à la boutique",
		Refresh:        "Actualiser",
		NoScript:       "Sans JavaScript, cette page ne se met pas à jour d’elle-même" + nbsp + ": rechargez-la pour voir l’état actuel.",
		Offline:        "Connexion perdue. Nouvelle tentative…",
		Print:          "Imprimer le reçu",
		ReceiptHeading: "Reçu",
		ShopLabel:      "Marchand",
		ItemLabel:      "Commande",
		InvoiceLabel:   "N° de facture",
		DateLabel:      "Date",
		PaymentsLabel:  "Paiements",
		TxLabel:        "Transaction",
		Unconfirmed:    "non confirmé",
		New:            "En attente de votre paiement",
		NewPartial:     "Paiement partiel" + nbsp + ": merci d’envoyer le reste",
		Updating:       "Mise à jour du montant",
		Processing:     "Paiement reçu",
		Settled:        "Payé en totalité. Merci" + nnbsp + "!",
		Expired:        "Cette facture a expiré",
		Invalid:        "Cette facture a été annulée",
		UpdatingNote:   "Le taux de change est en cours d’actualisation. Veuillez patienter un instant avant de payer.",
		ProcessingNote: "En attente de confirmation sur le réseau. Vous pouvez fermer cette page" + nnbsp + "; la boutique est prévenue.",
		DoNotSend:      "N’envoyez aucun paiement à cette adresse.",
		AlreadySent:    "Vous avez déjà payé" + nnbsp + "? Contactez la boutique en indiquant ce numéro de facture.",
		WrongCoin:      "Un paiement est arrivé dans une cryptomonnaie que cette facture n’accepte pas. Il n’est pas pris en compte" + nnbsp + "; la boutique va l’examiner et vous contacter.",
		PaidLate:       "Un paiement est arrivé après la fin de la facture. Il est enregistré" + nnbsp + "; la boutique vous contactera au sujet de votre commande ou d’un remboursement.",
		PaidOver:       "Vous avez envoyé plus que demandé. La boutique vous contactera au sujet de l’excédent.",
		ExpiredPartial: "Une partie du montant est arrivée avant l’expiration de la facture. La boutique vous contactera pour finaliser la commande ou vous rembourser.",
		Choose:         "Choisissez comment payer",
		ChooseNote:     "Choisissez une cryptomonnaie. Son adresse de paiement est créée à ce moment-là.",
		SwitchNote:     "Chaque cryptomonnaie a sa propre adresse. Un paiement déjà envoyé à une autre reste pris en compte.",
		PayWith:        "Payer avec",
		ChangeCoin:     "Changer de cryptomonnaie",
		CurrentCoin:    "actuelle",
		BackToPayment:  "Retour au paiement",
		ChooseFailed:   "Cette cryptomonnaie n’est pas disponible pour le moment. Réessayez ou choisissez-en une autre.",
	},
	{
		Lang: "es", LangName: "Español",
		DecimalMark: ",", GroupMark: ".", PercentFormat: "{n}" + nbsp + "%", MoneyFormat: "{amount}" + nbsp + "{symbol}",
		DateFormat:     "{day}/{month}/{year}, {time}",
		Title:          "Pago",
		PayTo:          "Pagar a {shop}",
		LanguageLabel:  "Idioma",
		TotalLabel:     "Importe total",
		AmountLabel:    "Envía exactamente",
		FiatLabel:      "≈ {amount}",
		NetworkLabel:   "Red",
		NetworkNote:    "Envía {symbol} solo por la red {network}.",
		AddressLabel:   "Dirección",
		Copy:           "Copiar",
		CopyAmount:     "Copiar importe",
		CopyAddress:    "Copiar dirección",
		CopyID:         "Copiar ID de factura",
		CopyTx:         "Copiar ID de transacción",
		Copied:         "Copiado",
		MinimumNote:    "Envía al menos {min} {symbol}; un importe menor se pierde.",
		QRToggle:       "Importe en el código QR",
		QRNoAmount:     "Este código solo contiene la dirección: introduce el importe en tu monedero.",
		QRAlt:          "Código QR: pagar {amount} {symbol} a {address}",
		QRAddressAlt:   "Código QR de la dirección {address}, sin importe",
		OpenWallet:     "Abrir en el monedero",
		QuoteLeft:      "Tipo de cambio garantizado durante",
		ExpiryLeft:     "Tiempo restante",
		PaidLabel:      "Recibido",
		PendingLabel:   "Pendiente de confirmación",
		RemainingLabel: "Falta por pagar",
		ProgressText:   "{percent} pagado",
		Return:         "Volver a la tienda",
		Refresh:        "Actualizar",
		NoScript:       "Sin JavaScript, esta página no se actualiza sola: recárgala para ver el estado actual.",
		Offline:        "Conexión perdida. Reintentando…",
		Print:          "Imprimir recibo",
		ReceiptHeading: "Recibo",
		ShopLabel:      "Comercio",
		ItemLabel:      "Pedido",
		InvoiceLabel:   "ID de factura",
		DateLabel:      "Fecha",
		PaymentsLabel:  "Pagos",
		TxLabel:        "Transacción",
		Unconfirmed:    "sin confirmar",
		New:            "Esperando tu pago",
		NewPartial:     "Pago parcial: envía el resto, por favor",
		Updating:       "Actualizando el importe",
		Processing:     "Pago recibido",
		Settled:        "Pagado por completo. ¡Gracias!",
		Expired:        "Esta factura ha caducado",
		Invalid:        "Esta factura se ha cancelado",
		UpdatingNote:   "Estamos actualizando el tipo de cambio. Espera un momento antes de pagar.",
		ProcessingNote: "Esperando la confirmación de la red. Puedes cerrar esta página; la tienda recibirá el aviso.",
		DoNotSend:      "No envíes ningún pago a esta dirección.",
		AlreadySent:    "¿Ya has pagado? Contacta con la tienda e indica este ID de factura.",
		WrongCoin:      "Ha llegado un pago en una criptomoneda que esta factura no acepta. No cuenta para el importe; la tienda lo revisará y se pondrá en contacto contigo.",
		PaidLate:       "Ha llegado un pago después de que terminara la factura. Está registrado; la tienda se pondrá en contacto contigo sobre tu pedido o un reembolso.",
		PaidOver:       "Has enviado más de lo solicitado. La tienda se pondrá en contacto contigo por la diferencia.",
		ExpiredPartial: "Parte del importe llegó antes de que caducara la factura. La tienda se pondrá en contacto contigo para completar el pedido o devolverte el dinero.",
		Choose:         "Elige cómo pagar",
		ChooseNote:     "Elige una criptomoneda. Su dirección de pago se crea al elegirla.",
		SwitchNote:     "Cada criptomoneda tiene su propia dirección. Un pago ya enviado a otra sigue contando.",
		PayWith:        "Pagar con",
		ChangeCoin:     "Cambiar de moneda",
		CurrentCoin:    "actual",
		BackToPayment:  "Volver al pago",
		ChooseFailed:   "Esta moneda no está disponible ahora. Inténtalo de nuevo o elige otra.",
	},
	{
		Lang: "pt-BR", LangName: "Português",
		DecimalMark: ",", GroupMark: ".", PercentFormat: "{n}%", MoneyFormat: "{symbol}" + nbsp + "{amount}",
		DateFormat:     "{day}/{month}/{year} {time}",
		Title:          "Pagamento",
		PayTo:          "Pagar {shop}",
		LanguageLabel:  "Idioma",
		TotalLabel:     "Valor total",
		AmountLabel:    "Envie exatamente",
		FiatLabel:      "≈ {amount}",
		NetworkLabel:   "Rede",
		NetworkNote:    "Envie {symbol} somente pela rede {network}.",
		AddressLabel:   "Endereço",
		Copy:           "Copiar",
		CopyAmount:     "Copiar valor",
		CopyAddress:    "Copiar endereço",
		CopyID:         "Copiar ID da fatura",
		CopyTx:         "Copiar ID da transação",
		Copied:         "Copiado",
		MinimumNote:    "Envie pelo menos {min} {symbol}; valores menores são perdidos.",
		QRToggle:       "Valor no QR code",
		QRNoAmount:     "Este código contém só o endereço: digite o valor na sua carteira.",
		QRAlt:          "QR code: pagar {amount} {symbol} para {address}",
		QRAddressAlt:   "QR code do endereço {address}, sem valor",
		OpenWallet:     "Abrir na carteira",
		QuoteLeft:      "Cotação garantida por",
		ExpiryLeft:     "Tempo restante",
		PaidLabel:      "Recebido",
		PendingLabel:   "Aguardando confirmação",
		RemainingLabel: "Falta pagar",
		ProgressText:   "{percent} pago",
		Return:         "Voltar à loja",
		Refresh:        "Atualizar",
		NoScript:       "Sem JavaScript, esta página não se atualiza sozinha: recarregue-a para ver a situação atual.",
		Offline:        "Conexão perdida. Tentando novamente…",
		Print:          "Imprimir recibo",
		ReceiptHeading: "Recibo",
		ShopLabel:      "Loja",
		ItemLabel:      "Pedido",
		InvoiceLabel:   "ID da fatura",
		DateLabel:      "Data",
		PaymentsLabel:  "Pagamentos",
		TxLabel:        "Transação",
		Unconfirmed:    "não confirmado",
		New:            "Aguardando seu pagamento",
		NewPartial:     "Pago em parte: envie o restante",
		Updating:       "Atualizando o valor",
		Processing:     "Pagamento recebido",
		Settled:        "Pago integralmente. Obrigado!",
		Expired:        "Esta fatura expirou",
		Invalid:        "Esta fatura foi cancelada",
		UpdatingNote:   "A cotação está sendo atualizada. Aguarde um momento antes de pagar.",
		ProcessingNote: "Aguardando confirmação na rede. Você pode fechar esta página; a loja será avisada.",
		DoNotSend:      "Não envie nenhum pagamento para este endereço.",
		AlreadySent:    "Já pagou? Entre em contato com a loja e informe este ID da fatura.",
		WrongCoin:      "Chegou um pagamento em uma criptomoeda que esta fatura não aceita. Ele não conta para o valor; a loja vai analisá-lo e entrar em contato com você.",
		PaidLate:       "Um pagamento chegou depois do fim da fatura. Ele foi registrado; a loja vai entrar em contato sobre o seu pedido ou um reembolso.",
		PaidOver:       "Você enviou mais do que o pedido. A loja vai entrar em contato sobre a diferença.",
		ExpiredPartial: "Parte do valor chegou antes de a fatura expirar. A loja vai entrar em contato para concluir o pedido ou reembolsar você.",
		Choose:         "Escolha como pagar",
		ChooseNote:     "Escolha uma criptomoeda. O endereço de pagamento é criado quando você escolhe.",
		SwitchNote:     "Cada criptomoeda tem seu próprio endereço. Um pagamento já enviado para outra continua valendo.",
		PayWith:        "Pagar com",
		ChangeCoin:     "Trocar moeda",
		CurrentCoin:    "atual",
		BackToPayment:  "Voltar ao pagamento",
		ChooseFailed:   "Não foi possível preparar esta moeda agora. Tente de novo ou escolha outra.",
	},
	{
		Lang: "it", LangName: "Italiano",
		DecimalMark: ",", GroupMark: ".", PercentFormat: "{n}%", MoneyFormat: "{amount}" + nbsp + "{symbol}",
		DateFormat:     "{day}/{month}/{year}, {time}",
		Title:          "Pagamento",
		PayTo:          "Paga {shop}",
		LanguageLabel:  "Lingua",
		TotalLabel:     "Totale",
		AmountLabel:    "Invia esattamente",
		FiatLabel:      "≈ {amount}",
		NetworkLabel:   "Rete",
		NetworkNote:    "Invia {symbol} solo sulla rete {network}.",
		AddressLabel:   "Indirizzo",
		Copy:           "Copia",
		CopyAmount:     "Copia importo",
		CopyAddress:    "Copia indirizzo",
		CopyID:         "Copia ID fattura",
		CopyTx:         "Copia ID transazione",
		Copied:         "Copiato",
		MinimumNote:    "Invia almeno {min} {symbol}; importi inferiori vanno persi.",
		QRToggle:       "Importo nel codice QR",
		QRNoAmount:     "Questo codice contiene solo l’indirizzo: inserisci l’importo nel tuo wallet.",
		QRAlt:          "Codice QR: paga {amount} {symbol} a {address}",
		QRAddressAlt:   "Codice QR dell’indirizzo {address}, senza importo",
		OpenWallet:     "Apri nel wallet",
		QuoteLeft:      "Cambio bloccato per",
		ExpiryLeft:     "Tempo rimasto",
		PaidLabel:      "Ricevuto",
		PendingLabel:   "In attesa di conferma",
		RemainingLabel: "Da pagare",
		ProgressText:   "{percent} pagato",
		Return:         "Torna al negozio",
		Refresh:        "Aggiorna",
		NoScript:       "Senza JavaScript questa pagina non si aggiorna da sola: ricaricala per vedere lo stato attuale.",
		Offline:        "Connessione persa. Nuovo tentativo…",
		Print:          "Stampa ricevuta",
		ReceiptHeading: "Ricevuta",
		ShopLabel:      "Negozio",
		ItemLabel:      "Ordine",
		InvoiceLabel:   "ID fattura",
		DateLabel:      "Data",
		PaymentsLabel:  "Pagamenti",
		TxLabel:        "Transazione",
		Unconfirmed:    "non confermato",
		New:            "In attesa del tuo pagamento",
		NewPartial:     "Pagato in parte: invia il resto",
		Updating:       "Aggiornamento dell’importo",
		Processing:     "Pagamento ricevuto",
		Settled:        "Pagato per intero. Grazie!",
		Expired:        "Questa fattura è scaduta",
		Invalid:        "Questa fattura è stata annullata",
		UpdatingNote:   "Stiamo aggiornando il tasso di cambio. Attendi un momento prima di pagare.",
		ProcessingNote: "In attesa di conferma sulla rete. Puoi chiudere questa pagina: il negozio riceverà l’avviso.",
		DoNotSend:      "Non inviare pagamenti a questo indirizzo.",
		AlreadySent:    "Hai già pagato? Contatta il negozio indicando questo ID fattura.",
		WrongCoin:      "È arrivato un pagamento in una criptovaluta che questa fattura non accetta. Non viene conteggiato; il negozio lo verificherà e ti contatterà.",
		PaidLate:       "È arrivato un pagamento dopo la chiusura della fattura. È stato registrato; il negozio ti contatterà per l’ordine o un rimborso.",
		PaidOver:       "Hai inviato più del richiesto. Il negozio ti contatterà per l’eccedenza.",
		ExpiredPartial: "Una parte dell’importo è arrivata prima della scadenza della fattura. Il negozio ti contatterà per completare l’ordine o rimborsarti.",
		Choose:         "Scegli come pagare",
		ChooseNote:     "Scegli una criptovaluta: l’indirizzo di pagamento viene creato quando la scegli.",
		SwitchNote:     "Ogni criptovaluta ha il suo indirizzo. Un pagamento già inviato a un’altra resta valido.",
		PayWith:        "Paga con",
		ChangeCoin:     "Cambia valuta",
		CurrentCoin:    "attuale",
		BackToPayment:  "Torna al pagamento",
		ChooseFailed:   "Non è stato possibile preparare questa valuta. Riprova o scegline un’altra.",
	},
	{
		Lang: "nl", LangName: "Nederlands",
		DecimalMark: ",", GroupMark: ".", PercentFormat: "{n}%", MoneyFormat: "{symbol}" + nbsp + "{amount}",
		DateFormat:     "{day}-{month}-{year} {time}",
		Title:          "Betaling",
		PayTo:          "Betalen aan {shop}",
		LanguageLabel:  "Taal",
		TotalLabel:     "Totaal",
		AmountLabel:    "Stuur precies",
		FiatLabel:      "≈ {amount}",
		NetworkLabel:   "Netwerk",
		NetworkNote:    "Stuur {symbol} alleen via het {network}-netwerk.",
		AddressLabel:   "Adres",
		Copy:           "Kopiëren",
		CopyAmount:     "Bedrag kopiëren",
		CopyAddress:    "Adres kopiëren",
		CopyID:         "Factuur-ID kopiëren",
		CopyTx:         "Transactie-ID kopiëren",
		Copied:         "Gekopieerd",
		MinimumNote:    "Stuur minstens {min} {symbol}; een kleiner bedrag gaat verloren.",
		QRToggle:       "Bedrag in QR-code",
		QRNoAmount:     "Deze code bevat alleen het adres: vul het bedrag zelf in je wallet in.",
		QRAlt:          "QR-code: betaal {amount} {symbol} aan {address}",
		QRAddressAlt:   "QR-code van het adres {address}, zonder bedrag",
		OpenWallet:     "Openen in wallet",
		QuoteLeft:      "Koers vast voor",
		ExpiryLeft:     "Resterende tijd",
		PaidLabel:      "Ontvangen",
		PendingLabel:   "Wacht op bevestiging",
		RemainingLabel: "Nog te betalen",
		ProgressText:   "{percent} betaald",
		Return:         "Terug naar de winkel",
		Refresh:        "Vernieuwen",
		NoScript:       "Zonder JavaScript werkt deze pagina zichzelf niet bij: laad haar opnieuw om de actuele stand te zien.",
		Offline:        "Verbinding verbroken. Opnieuw proberen…",
		Print:          "Betaalbewijs afdrukken",
		ReceiptHeading: "Betaalbewijs",
		ShopLabel:      "Winkel",
		ItemLabel:      "Bestelling",
		InvoiceLabel:   "Factuur-ID",
		DateLabel:      "Datum",
		PaymentsLabel:  "Betalingen",
		TxLabel:        "Transactie",
		Unconfirmed:    "onbevestigd",
		New:            "Wachten op je betaling",
		NewPartial:     "Deels betaald: stuur het restant",
		Updating:       "Bedrag wordt bijgewerkt",
		Processing:     "Betaling ontvangen",
		Settled:        "Volledig betaald. Bedankt!",
		Expired:        "Deze factuur is verlopen",
		Invalid:        "Deze factuur is geannuleerd",
		UpdatingNote:   "De wisselkoers wordt vernieuwd. Wacht even voordat je betaalt.",
		ProcessingNote: "Wacht op bevestiging in het netwerk. Je kunt deze pagina sluiten; de winkel krijgt bericht.",
		DoNotSend:      "Stuur geen betaling meer naar dit adres.",
		AlreadySent:    "Al betaald? Neem contact op met de winkel en vermeld dit factuur-ID.",
		WrongCoin:      "Er is een betaling binnengekomen in een munt die deze factuur niet accepteert. Die telt niet mee; de winkel bekijkt haar en neemt contact met je op.",
		PaidLate:       "Er is een betaling binnengekomen nadat de factuur was afgelopen. Die is geregistreerd; de winkel neemt contact met je op over je bestelling of een terugbetaling.",
		PaidOver:       "Je hebt meer gestuurd dan gevraagd. De winkel neemt contact met je op over het verschil.",
		ExpiredPartial: "Een deel van het bedrag kwam binnen voordat de factuur verliep. De winkel neemt contact met je op om de bestelling af te ronden of je terug te betalen.",
		Choose:         "Kies hoe je betaalt",
		ChooseNote:     "Kies een munt. Het betaaladres wordt aangemaakt zodra je kiest.",
		SwitchNote:     "Elke munt heeft een eigen adres. Een betaling die al naar een andere is gestuurd, telt nog steeds mee.",
		PayWith:        "Betalen met",
		ChangeCoin:     "Andere munt",
		CurrentCoin:    "huidig",
		BackToPayment:  "Terug naar betaling",
		ChooseFailed:   "Deze munt kon nu niet worden klaargezet. Probeer het opnieuw of kies een andere.",
	},
	{
		Lang: "tr", LangName: "Türkçe",
		DecimalMark: ",", GroupMark: ".", PercentFormat: "%{n}", MoneyFormat: "{symbol}{amount}",
		DateFormat:     "{day}.{month}.{year} {time}",
		Title:          "Ödeme",
		PayTo:          "{shop} için ödeme",
		LanguageLabel:  "Dil",
		TotalLabel:     "Toplam",
		AmountLabel:    "Gönderilecek tam tutar",
		FiatLabel:      "≈ {amount}",
		NetworkLabel:   "Ağ",
		NetworkNote:    "{symbol} yalnızca {network} ağı üzerinden gönderilmelidir.",
		AddressLabel:   "Adres",
		Copy:           "Kopyala",
		CopyAmount:     "Tutarı kopyala",
		CopyAddress:    "Adresi kopyala",
		CopyID:         "Fatura numarasını kopyala",
		CopyTx:         "İşlem kimliğini kopyala",
		Copied:         "Kopyalandı",
		MinimumNote:    "En az {min} {symbol} gönderin; daha az tutarlar kaybolur.",
		QRToggle:       "QR kodunda tutar",
		QRNoAmount:     "Bu kod yalnızca adresi içerir: tutarı cüzdanınıza kendiniz girin.",
		QRAlt:          "QR kodu: {address} adresine {amount} {symbol} ödeyin",
		QRAddressAlt:   "{address} adresinin tutarsız QR kodu",
		OpenWallet:     "Cüzdanda aç",
		QuoteLeft:      "Kurun geçerlilik süresi",
		ExpiryLeft:     "Kalan süre",
		PaidLabel:      "Alınan",
		PendingLabel:   "Onay bekleniyor",
		RemainingLabel: "Kalan tutar",
		ProgressText:   "{percent} ödendi",
		Return:         "Mağazaya dön",
		Refresh:        "Yenile",
		NoScript:       "JavaScript olmadan bu sayfa kendiliğinden güncellenmez: güncel durumu görmek için sayfayı yenileyin.",
		Offline:        "Bağlantı kesildi. Yeniden deneniyor…",
		Print:          "Makbuzu yazdır",
		ReceiptHeading: "Makbuz",
		ShopLabel:      "Mağaza",
		ItemLabel:      "Sipariş",
		InvoiceLabel:   "Fatura numarası",
		DateLabel:      "Tarih",
		PaymentsLabel:  "Ödemeler",
		TxLabel:        "İşlem",
		Unconfirmed:    "onaylanmadı",
		New:            "Ödemeniz bekleniyor",
		NewPartial:     "Kısmen ödendi: lütfen kalanını gönderin",
		Updating:       "Tutar güncelleniyor",
		Processing:     "Ödeme alındı",
		Settled:        "Tamamı ödendi. Teşekkürler!",
		Expired:        "Bu faturanın süresi doldu",
		Invalid:        "Bu fatura iptal edildi",
		UpdatingNote:   "Döviz kuru yenileniyor. Ödeme yapmadan önce lütfen biraz bekleyin.",
		ProcessingNote: "Ağda onay bekleniyor. Bu sayfayı kapatabilirsiniz; mağazaya bildirim gider.",
		DoNotSend:      "Bu adrese ödeme göndermeyin.",
		AlreadySent:    "Ödeme yaptınız mı? Mağazayla iletişime geçin ve bu fatura numarasını belirtin.",
		WrongCoin:      "Bu faturanın kabul etmediği bir kripto parayla ödeme geldi. Tutara sayılmaz; mağaza ödemeyi inceleyip sizinle iletişime geçecek.",
		PaidLate:       "Fatura kapandıktan sonra bir ödeme geldi. Ödeme kaydedildi; mağaza siparişiniz veya iade için sizinle iletişime geçecek.",
		PaidOver:       "İstenenden fazla gönderdiniz. Mağaza fazla tutar için sizinle iletişime geçecek.",
		ExpiredPartial: "Tutarın bir kısmı fatura süresi dolmadan geldi. Mağaza siparişi tamamlamak veya iade yapmak için sizinle iletişime geçecek.",
		Choose:         "Nasıl ödemek istersiniz?",
		ChooseNote:     "Bir kripto para seçin; ödeme adresi seçtiğinizde oluşturulur.",
		SwitchNote:     "Her kripto paranın kendi adresi vardır. Başka bir adrese gönderilmiş ödeme yine sayılır.",
		PayWith:        "Ödeme birimi",
		ChangeCoin:     "Para birimini değiştir",
		CurrentCoin:    "seçili",
		BackToPayment:  "Ödemeye dön",
		ChooseFailed:   "Bu para birimi şu anda hazırlanamadı. Lütfen tekrar deneyin veya başka birini seçin.",
	},
	{
		Lang: "ru", LangName: "Русский",
		DecimalMark: ",", GroupMark: nbsp, PercentFormat: "{n}" + nbsp + "%", MoneyFormat: "{amount}" + nbsp + "{symbol}",
		DateFormat:     "{day}.{month}.{year}, {time}",
		Title:          "Оплата",
		PayTo:          "Оплата: {shop}",
		LanguageLabel:  "Язык",
		TotalLabel:     "Итого",
		AmountLabel:    "Отправьте ровно",
		FiatLabel:      "≈ {amount}",
		NetworkLabel:   "Сеть",
		NetworkNote:    "Отправляйте {symbol} только в сети {network}.",
		AddressLabel:   "Адрес",
		Copy:           "Копировать",
		CopyAmount:     "Копировать сумму",
		CopyAddress:    "Копировать адрес",
		CopyID:         "Копировать номер счёта",
		CopyTx:         "Копировать ID транзакции",
		Copied:         "Скопировано",
		MinimumNote:    "Отправьте не меньше {min} {symbol}: меньшая сумма будет потеряна.",
		QRToggle:       "Сумма в QR-коде",
		QRNoAmount:     "В этом коде только адрес: введите сумму в кошельке сами.",
		QRAlt:          "QR-код: оплатить {amount} {symbol} на адрес {address}",
		QRAddressAlt:   "QR-код адреса {address} без суммы",
		OpenWallet:     "Открыть в кошельке",
		QuoteLeft:      "Курс зафиксирован ещё",
		ExpiryLeft:     "Осталось времени",
		PaidLabel:      "Получено",
		PendingLabel:   "Ожидает подтверждения",
		RemainingLabel: "Осталось оплатить",
		ProgressText:   "Оплачено {percent}",
		Return:         "Вернуться в магазин",
		Refresh:        "Обновить",
		NoScript:       "Без JavaScript страница не обновляется сама: перезагрузите её, чтобы увидеть текущее состояние.",
		Offline:        "Нет соединения. Повторяем попытку…",
		Print:          "Распечатать квитанцию",
		ReceiptHeading: "Квитанция",
		ShopLabel:      "Магазин",
		ItemLabel:      "Заказ",
		InvoiceLabel:   "Номер счёта",
		DateLabel:      "Дата",
		PaymentsLabel:  "Платежи",
		TxLabel:        "Транзакция",
		Unconfirmed:    "не подтверждён",
		New:            "Ожидаем ваш платёж",
		NewPartial:     "Оплачено частично: отправьте остаток",
		Updating:       "Обновляем сумму",
		Processing:     "Платёж получен",
		Settled:        "Оплачено полностью. Спасибо!",
		Expired:        "Срок действия счёта истёк",
		Invalid:        "Счёт отменён",
		UpdatingNote:   "Курс обмена обновляется. Подождите немного, прежде чем платить.",
		ProcessingNote: "Ожидаем подтверждения в сети. Страницу можно закрыть: магазин получит уведомление.",
		DoNotSend:      "Не отправляйте платежи на этот адрес.",
		AlreadySent:    "Уже оплатили? Свяжитесь с магазином и назовите этот номер счёта.",
		WrongCoin:      "Пришёл платёж в криптовалюте, которую этот счёт не принимает. Он не засчитан; магазин проверит его и свяжется с вами.",
		PaidLate:       "Платёж пришёл после закрытия счёта. Он учтён; магазин свяжется с вами насчёт заказа или возврата.",
		PaidOver:       "Вы отправили больше, чем нужно. Магазин свяжется с вами насчёт излишка.",
		ExpiredPartial: "Часть суммы пришла до истечения срока счёта. Магазин свяжется с вами, чтобы завершить заказ или вернуть деньги.",
		Choose:         "Выберите, чем оплатить",
		ChooseNote:     "Выберите криптовалюту — адрес для оплаты будет создан после выбора.",
		SwitchNote:     "У каждой криптовалюты свой адрес. Платёж, уже отправленный на другой, всё равно засчитывается.",
		PayWith:        "Чем оплатить",
		ChangeCoin:     "Сменить валюту",
		CurrentCoin:    "выбрана",
		BackToPayment:  "Назад к оплате",
		ChooseFailed:   "Не удалось подготовить эту валюту. Попробуйте ещё раз или выберите другую.",
	},
	{
		Lang: "zh-CN", LangName: "中文",
		DecimalMark: ".", GroupMark: ",", PercentFormat: "{n}%", MoneyFormat: "{symbol}{amount}",
		DateFormat:     "{year}/{month}/{day} {time}",
		Title:          "付款",
		PayTo:          "向 {shop} 付款",
		LanguageLabel:  "语言",
		TotalLabel:     "总计",
		AmountLabel:    "请准确发送",
		FiatLabel:      "≈ {amount}",
		NetworkLabel:   "网络",
		NetworkNote:    "请仅通过 {network} 网络发送 {symbol}。",
		AddressLabel:   "地址",
		Copy:           "复制",
		CopyAmount:     "复制金额",
		CopyAddress:    "复制地址",
		CopyID:         "复制账单编号",
		CopyTx:         "复制交易 ID",
		Copied:         "已复制",
		MinimumNote:    "请至少发送 {min} {symbol}，低于此金额将会丢失。",
		QRToggle:       "二维码包含金额",
		QRNoAmount:     "此二维码仅含地址：请在钱包中自行输入金额。",
		QRAlt:          "二维码：向 {address} 支付 {amount} {symbol}",
		QRAddressAlt:   "地址 {address} 的二维码，不含金额",
		OpenWallet:     "在钱包中打开",
		QuoteLeft:      "汇率锁定剩余",
		ExpiryLeft:     "剩余时间",
		PaidLabel:      "已收到",
		PendingLabel:   "待确认",
		RemainingLabel: "待支付",
		ProgressText:   "已付 {percent}",
		Return:         "返回商店",
		Refresh:        "刷新",
		NoScript:       "未启用 JavaScript 时，本页面不会自动更新：请刷新页面查看最新状态。",
		Offline:        "连接已断开，正在重试…",
		Print:          "打印收据",
		ReceiptHeading: "收据",
		ShopLabel:      "商家",
		ItemLabel:      "订单",
		InvoiceLabel:   "账单编号",
		DateLabel:      "日期",
		PaymentsLabel:  "付款记录",
		TxLabel:        "交易",
		Unconfirmed:    "未确认",
		New:            "等待您付款",
		NewPartial:     "已部分付款：请发送剩余金额",
		Updating:       "正在更新金额",
		Processing:     "已收到付款",
		Settled:        "已全额付款，谢谢！",
		Expired:        "此账单已过期",
		Invalid:        "此账单已取消",
		UpdatingNote:   "正在刷新汇率，请稍候再付款。",
		ProcessingNote: "正在等待网络确认。您可以关闭此页面，商家会收到通知。",
		DoNotSend:      "请勿再向此地址付款。",
		AlreadySent:    "已经付款？请联系商家并提供此账单编号。",
		WrongCoin:      "收到一笔本账单不接受的币种付款。该笔付款不计入金额；商家会核实后与您联系。",
		PaidLate:       "账单结束后收到一笔付款。该笔付款已记录；商家会就您的订单或退款与您联系。",
		PaidOver:       "您支付的金额超出所需。商家会就多付部分与您联系。",
		ExpiredPartial: "账单过期前已收到部分金额。商家会与您联系，完成订单或为您退款。",
		Choose:         "选择付款币种",
		ChooseNote:     "请选择一种加密货币，选择后即为您生成付款地址。",
		SwitchNote:     "每个币种都有自己的地址。已发送到其他地址的付款仍然有效。",
		PayWith:        "付款币种",
		ChangeCoin:     "更换币种",
		CurrentCoin:    "当前",
		BackToPayment:  "返回付款",
		ChooseFailed:   "暂时无法使用此币种，请重试或选择其他币种。",
	},
	{
		Lang: "ja", LangName: "日本語",
		DecimalMark: ".", GroupMark: ",", PercentFormat: "{n}%", MoneyFormat: "{symbol}{amount}",
		DateFormat:     "{year}/{month}/{day} {time}",
		Title:          "お支払い",
		PayTo:          "{shop} へのお支払い",
		LanguageLabel:  "言語",
		TotalLabel:     "合計",
		AmountLabel:    "この金額を正確に送金",
		FiatLabel:      "≈ {amount}",
		NetworkLabel:   "ネットワーク",
		NetworkNote:    "{symbol} は必ず {network} ネットワークで送金してください。",
		AddressLabel:   "アドレス",
		Copy:           "コピー",
		CopyAmount:     "金額をコピー",
		CopyAddress:    "アドレスをコピー",
		CopyID:         "請求書番号をコピー",
		CopyTx:         "トランザクション ID をコピー",
		Copied:         "コピーしました",
		MinimumNote:    "{min} {symbol} 以上を送金してください。これより少ない金額は失われます。",
		QRToggle:       "QR コードに金額を含める",
		QRNoAmount:     "このコードはアドレスのみです。金額はウォレットで入力してください。",
		QRAlt:          "QR コード：{address} へ {amount} {symbol} を支払う",
		QRAddressAlt:   "アドレス {address} の QR コード（金額なし）",
		OpenWallet:     "ウォレットで開く",
		QuoteLeft:      "レート保証の残り",
		ExpiryLeft:     "残り時間",
		PaidLabel:      "受領済み",
		PendingLabel:   "承認待ち",
		RemainingLabel: "未払い",
		ProgressText:   "{percent} 支払い済み",
		Return:         "ショップに戻る",
		Refresh:        "再読み込み",
		NoScript:       "JavaScript が無効のため、このページは自動で更新されません。最新の状態を見るには再読み込みしてください。",
		Offline:        "接続が切れました。再試行しています…",
		Print:          "領収書を印刷",
		ReceiptHeading: "領収書",
		ShopLabel:      "ショップ",
		ItemLabel:      "ご注文",
		InvoiceLabel:   "請求書番号",
		DateLabel:      "日時",
		PaymentsLabel:  "お支払い履歴",
		TxLabel:        "トランザクション",
		Unconfirmed:    "未承認",
		New:            "お支払いをお待ちしています",
		NewPartial:     "一部お支払い済み：残額を送金してください",
		Updating:       "金額を更新しています",
		Processing:     "お支払いを受け付けました",
		Settled:        "お支払いが完了しました。ありがとうございます！",
		Expired:        "この請求書は期限切れです",
		Invalid:        "この請求書はキャンセルされました",
		UpdatingNote:   "為替レートを更新しています。お支払いの前に少々お待ちください。",
		ProcessingNote: "ネットワークでの承認を待っています。このページは閉じても大丈夫です。ショップに通知されます。",
		DoNotSend:      "このアドレスには送金しないでください。",
		AlreadySent:    "すでに送金した場合は、この請求書番号を添えてショップにご連絡ください。",
		WrongCoin:      "この請求書で受け付けていない通貨で入金がありました。請求額には充当されません。ショップが確認のうえご連絡します。",
		PaidLate:       "請求書の終了後に入金がありました。入金は記録されています。ご注文または返金についてショップからご連絡します。",
		PaidOver:       "請求額より多く送金されました。差額についてショップからご連絡します。",
		ExpiredPartial: "期限切れ前に一部の金額を受け取りました。ご注文の完了または返金についてショップからご連絡します。",
		Choose:         "お支払い通貨を選択",
		ChooseNote:     "通貨を選ぶと、その通貨の支払いアドレスが作成されます。",
		SwitchNote:     "通貨ごとに別のアドレスになります。すでに別のアドレスへ送金した分も反映されます。",
		PayWith:        "支払い通貨",
		ChangeCoin:     "通貨を変更",
		CurrentCoin:    "選択中",
		BackToPayment:  "お支払いに戻る",
		ChooseFailed:   "この通貨は現在ご利用いただけません。もう一度お試しいただくか、別の通貨をお選びください。",
	},
}
