/**
 * One small export per bank profile (src/statements/csv-profiles.ts), written for these tests
 * after the layout each bank documents for its CSV export: its header (or, for files without one,
 * its column order), preamble, date and amount format, direction convention, pending lines and
 * footer. Names, IBANs and amounts are made up. `lines`: every line the file must give, as
 * [booking date, value date, cents, direction, currency, counterparty name, counterparty IBAN,
 * end-to-end id, bank reference, remittance, account].
 */
export type Expected = [string, string | null, bigint, 'credit' | 'debit', string, string | null, string | null, string | null, string | null, string | null, string | null];

export interface BankFixture {
  profile: string;
  country: string;
  text: string;
  lines: Expected[];
  /** settings the file needs (a file without currency) */
  accountCurrencies?: Record<string, string>;
}

const rows = (...r: string[]) => `${r.join('\r\n')}\r\n`;
const DE = 'DE44500105175407324931';
const PROV = 'DE02120300000000202051';

export const BANK_FIXTURES: BankFixture[] = [
  {
    profile: 'Sparkasse (CSV-CAMT V2, CSV-MT940)',
    country: 'DE',
    text: rows(
      '"Auftragskonto";"Buchungstag";"Valutadatum";"Buchungstext";"Verwendungszweck";"Glaeubiger ID";"Mandatsreferenz";"Kundenreferenz (End-to-End)";"Sammlerreferenz";"Lastschrift Ursprungsbetrag";"Auslagenersatz Ruecklastschrift";"Beguenstigter/Zahlungspflichtiger";"Kontonummer/IBAN";"BIC (SWIFT-Code)";"Betrag";"Waehrung";"Info"',
      `"${DE}";"05.03.26";"05.03.26";"GUTSCHR. UEBERW.";"Auszahlung PO2026030500000001";"";"";"PO2026030500000001";"";"";"";"BNPL Provider GmbH";"${PROV}";"BNPADEFF";"1.234,56";"EUR";"Umsatz gebucht"`,
      `"${DE}";"06.03.26";"06.03.26";"LASTSCHRIFT";"Strom Maerz";"DE98ZZZ09999999999";"M-1";"";"";"";"";"Stadtwerke";"DE89370400440532013000";"COBADEFF";"-45,10";"EUR";"Umsatz gebucht"`,
      `"${DE}";"07.03.26";"07.03.26";"KARTENZAHLUNG";"Tankstelle";"";"";"";"";"";"";"";"";"";"-60,00";"EUR";"Umsatz vorgemerkt"`,
    ),
    lines: [
      ['2026-03-05', '2026-03-05', 123456n, 'credit', 'EUR', 'BNPL Provider GmbH', PROV, 'PO2026030500000001', null, 'Auszahlung PO2026030500000001', DE],
      ['2026-03-06', '2026-03-06', 4510n, 'debit', 'EUR', 'Stadtwerke', 'DE89370400440532013000', null, null, 'Strom Maerz', DE],
    ],
  },
  {
    profile: 'Volksbanken Raiffeisenbanken (since 2023)',
    country: 'DE',
    text: rows(
      'Bezeichnung Auftragskonto;IBAN Auftragskonto;BIC Auftragskonto;Bankname Auftragskonto;Buchungstag;Valutadatum;Name Zahlungsbeteiligter;IBAN Zahlungsbeteiligter;BIC (SWIFT-Code) Zahlungsbeteiligter;Buchungstext;Verwendungszweck;Betrag;Waehrung;Saldo nach Buchung;Bemerkung;Kategorie;Steuerrelevant;Glaeubiger ID;Mandatsreferenz',
      `Girokonto;${DE};GENODEF1XXX;VR Bank;02.03.2026;02.03.2026;BNPL Provider GmbH;${PROV};BNPADEFF;Gutschrift;Auszahlung PO2026030200000002;250,00;EUR;1.250,00;;;;;`,
      `Girokonto;${DE};GENODEF1XXX;VR Bank;03.03.2026;04.03.2026;Miete GmbH;DE89370400440532013000;COBADEFF;Dauerauftrag;Miete Maerz;-1.000,00;EUR;250,00;;;;;`,
    ),
    lines: [
      ['2026-03-02', '2026-03-02', 25000n, 'credit', 'EUR', 'BNPL Provider GmbH', PROV, null, null, 'Auszahlung PO2026030200000002', DE],
      ['2026-03-03', '2026-03-04', 100000n, 'debit', 'EUR', 'Miete GmbH', 'DE89370400440532013000', null, null, 'Miete Maerz', DE],
    ],
  },
  {
    profile: 'Volksbanken Raiffeisenbanken (until 2023, S/H column)',
    country: 'DE',
    text: rows(
      'Volksbank Musterstadt eG',
      'Umsatzanzeige;',
      `Kontonummer:;${DE}`,
      '',
      'Buchungstag;Valuta;Auftraggeber/Zahlungsempfänger;Empfänger/Zahlungspflichtiger;Konto-Nr.;IBAN;BLZ;BIC;Vorgang/Verwendungszweck;Kundenreferenz;Währung;Umsatz;',
      `02.03.2026;02.03.2026;Muster GmbH;BNPL Provider GmbH;;${PROV};;BNPADEFF;Gutschrift Auszahlung PO2026030200000003;PO2026030200000003;EUR;99,00;H`,
      '03.03.2026;03.03.2026;Muster GmbH;Buero AG;;DE89370400440532013000;;COBADEFF;Rechnung 77;;EUR;12,34;S',
      '01.03.2026;;;;;;;;Anfangssaldo;;EUR;500,00;H',
      '03.03.2026;;;;;;;;Endsaldo;;EUR;586,66;H',
    ),
    lines: [
      ['2026-03-02', '2026-03-02', 9900n, 'credit', 'EUR', 'BNPL Provider GmbH', PROV, 'PO2026030200000003', null, 'Gutschrift Auszahlung PO2026030200000003', DE],
      ['2026-03-03', '2026-03-03', 1234n, 'debit', 'EUR', 'Buero AG', 'DE89370400440532013000', null, null, 'Rechnung 77', DE],
    ],
  },
  {
    profile: 'Deutsche Bank',
    country: 'DE',
    text: rows(
      'Umsätze Girokonto;Zeitraum: 01.03.2026 - 31.03.2026;',
      `IBAN;${DE}`,
      'Buchungstag;Wert;Umsatzart;Begünstigter / Auftraggeber;Verwendungszweck;IBAN;BIC;Kundenreferenz;Mandatsreferenz ;Gläubiger ID;Fremde Gebühren;Betrag;Abweichender Empfänger;Anzahl der Aufträge;Anzahl der Schecks;Soll;Haben;Währung',
      `04.03.2026;04.03.2026;SEPA-Gutschrift;BNPL Provider GmbH;Auszahlung;${PROV};BNPADEFF;PO2026030400000004;;;;;;;;;"1.500,00";EUR`,
      '05.03.2026;05.03.2026;SEPA-Lastschrift;Versicherung AG;Beitrag;DE89370400440532013000;COBADEFF;;M-9;DE98ZZZ;;;;;;-89,90;;EUR',
      'Kontostand;31.03.2026;;;1.910,10;EUR',
    ),
    lines: [
      ['2026-03-04', '2026-03-04', 150000n, 'credit', 'EUR', 'BNPL Provider GmbH', PROV, 'PO2026030400000004', null, 'Auszahlung', DE],
      ['2026-03-05', '2026-03-05', 8990n, 'debit', 'EUR', 'Versicherung AG', 'DE89370400440532013000', null, null, 'Beitrag', DE],
    ],
  },
  {
    profile: 'Commerzbank',
    country: 'DE',
    text: rows(
      'Buchungstag;Wertstellung;Umsatzart;Buchungstext;Betrag;Währung;Auftraggeberkonto;Bankleitzahl Auftraggeberkonto;IBAN Auftraggeberkonto;Kategorie',
      `06.03.2026;06.03.2026;Gutschrift;BNPL Provider GmbH Auszahlung End-to-End-Ref.: PO2026030600000005;320,00;EUR;5407324931;50010517;${DE};Sonstiges`,
      `;07.03.2026;Lastschrift;vorgemerkt Kartenzahlung;-15,00;EUR;5407324931;50010517;${DE};`,
      `08.03.2026;08.03.2026;Lastschrift;Telefon GmbH Rechnung 2026-03;-29,99;EUR;5407324931;50010517;${DE};Telefon`,
    ),
    lines: [
      ['2026-03-06', '2026-03-06', 32000n, 'credit', 'EUR', null, null, null, null, 'BNPL Provider GmbH Auszahlung End-to-End-Ref.: PO2026030600000005', DE],
      ['2026-03-08', '2026-03-08', 2999n, 'debit', 'EUR', null, null, null, null, 'Telefon GmbH Rechnung 2026-03', DE],
    ],
  },
  {
    profile: 'DKB (since 2023)',
    country: 'DE',
    text: rows(
      `"Girokonto";"${DE}"`,
      '"Zeitraum:";"01.03.2026 - 31.03.2026"',
      '"Kontostand vom 31.03.2026:";"2.000,00 €"',
      '""',
      '"Buchungsdatum";"Wertstellung";"Status";"Zahlungspflichtige*r";"Zahlungsempfänger*in";"Verwendungszweck";"Umsatztyp";"IBAN";"Betrag (€)";"Gläubiger-ID";"Mandatsreferenz";"Kundenreferenz"',
      `"09.03.26";"09.03.26";"Gebucht";"BNPL Provider GmbH";"Muster GmbH";"Auszahlung";"Eingang";"${PROV}";"700,00 €";"";"";"PO2026030900000006"`,
      '"10.03.26";"10.03.26";"Gebucht";"Muster GmbH";"Bäckerei Korn";"Brot";"Ausgang";"DE89370400440532013000";"-4,50 €";"";"";""',
      '"";"11.03.26";"Vorgemerkt";"Muster GmbH";"Tankstelle";"Benzin";"Ausgang";"";"-55,00 €";"";"";""',
    ),
    lines: [
      ['2026-03-09', '2026-03-09', 70000n, 'credit', 'EUR', 'BNPL Provider GmbH', PROV, 'PO2026030900000006', null, 'Auszahlung', DE],
      ['2026-03-10', '2026-03-10', 450n, 'debit', 'EUR', 'Bäckerei Korn', 'DE89370400440532013000', null, null, 'Brot', DE],
    ],
  },
  {
    profile: 'DKB (until 2023)',
    country: 'DE',
    text: rows(
      `"Kontonummer:";"${DE} / Girokonto";`,
      '',
      '"Buchungstag";"Wertstellung";"Buchungstext";"Auftraggeber / Begünstigter";"Verwendungszweck";"Kontonummer";"BLZ";"Betrag (EUR)";"Gläubiger-ID";"Mandatsreferenz";"Kundenreferenz";',
      `"12.03.2026";"12.03.2026";"Gutschrift";"BNPL Provider GmbH";"Auszahlung PO2026031200000007";"${PROV}";"BNPADEFF";"410,00";"";"";"";`,
    ),
    lines: [['2026-03-12', '2026-03-12', 41000n, 'credit', 'EUR', 'BNPL Provider GmbH', PROV, null, null, 'Auszahlung PO2026031200000007', DE]],
  },
  {
    profile: 'ING Deutschland',
    country: 'DE',
    text: rows(
      'Umsatzanzeige;Datei erstellt am: 31.03.2026 10:00',
      '',
      `IBAN;DE44 5001 0517 5407 3249 31`,
      'Kontoname;Girokonto',
      'Bank;ING',
      'Zeitraum;01.03.2026 - 31.03.2026',
      'Saldo;2.345,67;EUR',
      '',
      'Buchung;Valuta;Auftraggeber/Empfänger;Buchungstext;Verwendungszweck;Saldo;Währung;Betrag;Währung',
      '13.03.2026;13.03.2026;BNPL Provider GmbH;Gutschrift;Auszahlung PO2026031300000008;2.345,67;EUR;1.000,00;EUR',
      '14.03.2026;14.03.2026;Versand AG;Lastschrift;Porto;2.335,67;EUR;-10,00;EUR',
    ),
    lines: [
      ['2026-03-13', '2026-03-13', 100000n, 'credit', 'EUR', 'BNPL Provider GmbH', null, null, null, 'Auszahlung PO2026031300000008', DE],
      ['2026-03-14', '2026-03-14', 1000n, 'debit', 'EUR', 'Versand AG', null, null, null, 'Porto', DE],
    ],
  },
  {
    profile: 'comdirect',
    country: 'DE',
    text: rows(
      ';',
      '"Umsätze Girokonto";"Zeitraum: 30 Tage";',
      '"Neuer Kontostand";"3.000,00 EUR";',
      '',
      '"Buchungstag";"Wertstellung (Valuta)";"Vorgang";"Buchungstext";"Umsatz in EUR";',
      '"offen";"--";"Lastschrift / Belastung";"Auftraggeber: Shop";"-20,00";',
      '"15.03.2026";"15.03.2026";"Übertrag / Überweisung";"Auftraggeber: BNPL Provider GmbH Buchungstext: Auszahlung PO2026031500000009";"2.000,00";',
      '"16.03.2026";"16.03.2026";"Lastschrift / Belastung";"Empfänger: Strom AG Buchungstext: Abschlag";"-75,00";',
      '',
      '"Alter Kontostand";"1.075,00 EUR";',
    ),
    lines: [
      ['2026-03-15', '2026-03-15', 200000n, 'credit', 'EUR', null, null, null, null, 'Auftraggeber: BNPL Provider GmbH Buchungstext: Auszahlung PO2026031500000009', null],
      ['2026-03-16', '2026-03-16', 7500n, 'debit', 'EUR', null, null, null, null, 'Empfänger: Strom AG Buchungstext: Abschlag', null],
    ],
  },
  {
    profile: 'Postbank',
    country: 'DE',
    text: rows(
      'Umsätze;',
      `IBAN;${DE}`,
      'Buchungstag;Wert;Umsatzart;Buchungsdetails;Auftraggeber;Empfänger;Betrag (€);Saldo (€)',
      'noch nicht ausgeführte Umsätze;;;;;;;',
      '17.03.2026;17.03.2026;Lastschrift;Vorgemerkt Abo;Muster GmbH;Streaming AG;-9,99 €;',
      'gebuchte Umsätze;;;;;;;',
      '18.03.2026;18.03.2026;Gutschrift;Auszahlung PO2026031800000010;BNPL Provider GmbH;Muster GmbH;48,79 €;1.048,79 €',
    ),
    lines: [['2026-03-18', '2026-03-18', 4879n, 'credit', 'EUR', 'BNPL Provider GmbH', null, null, null, 'Auszahlung PO2026031800000010', DE]],
  },
  {
    profile: 'N26',
    country: 'DE',
    text: rows(
      '"Booking Date","Value Date","Partner Name","Partner Iban",Type,"Payment Reference","Account Name","Amount (EUR)","Original Amount","Original Currency","Exchange Rate"',
      `2026-03-19,2026-03-19,"BNPL Provider GmbH",${PROV},Credit Transfer,"Auszahlung PO2026031900000011","Main Account",512.30,,,`,
      '2026-03-20,2026-03-20,"Coffee Shop",,Debit Transfer,"-","Main Account",-3.20,-3.20,EUR,1.0',
    ),
    lines: [
      ['2026-03-19', '2026-03-19', 51230n, 'credit', 'EUR', 'BNPL Provider GmbH', PROV, null, null, 'Auszahlung PO2026031900000011', null],
      ['2026-03-20', '2026-03-20', 320n, 'debit', 'EUR', 'Coffee Shop', null, null, null, '-', null],
    ],
  },
  {
    profile: 'HypoVereinsbank (UniCredit)',
    country: 'DE',
    text: rows(
      'Kontonummer;Buchungsdatum;Valuta;Empfaenger 1;Empfaenger 2;Verwendungszweck;Betrag;Waehrung',
      `${DE};21.03.2026;21.03.2026;BNPL Provider GmbH;;Auszahlung PO2026032100000012;333,33;EUR`,
    ),
    lines: [['2026-03-21', '2026-03-21', 33333n, 'credit', 'EUR', 'BNPL Provider GmbH', null, null, null, 'Auszahlung PO2026032100000012', DE]],
  },
  {
    profile: 'German VWZ1..VWZ14 layout (HBCI exports)',
    country: 'DE',
    text: rows(
      'Konto;Buchungstag;Valuta;Name;IBAN;Buchungstext;VWZ1;VWZ2;VWZ3;VWZ4;VWZ5;VWZ6;VWZ7;VWZ8;VWZ9;VWZ10;VWZ11;VWZ12;VWZ13;VWZ14;Betrag;Währung;Soll/Haben',
      `${DE};22.03.2026;22.03.2026;BNPL Provider GmbH;${PROV};GUTSCHRIFT;Auszahlung;PO2026032200000013;;;;;;;;;;;;;77,00;EUR;H`,
      `${DE};23.03.2026;23.03.2026;Buero AG;;LASTSCHRIFT;Papier;Rechnung 5;;;;;;;;;;;;;7,00;EUR;S`,
    ),
    lines: [
      ['2026-03-22', '2026-03-22', 7700n, 'credit', 'EUR', 'BNPL Provider GmbH', PROV, null, null, 'GUTSCHRIFT Auszahlung PO2026032200000013', DE],
      ['2026-03-23', '2026-03-23', 700n, 'debit', 'EUR', 'Buero AG', null, null, null, 'LASTSCHRIFT Papier Rechnung 5', DE],
    ],
  },
  {
    profile: 'ING Nederland',
    country: 'NL',
    text: rows(
      '"Datum","Naam / Omschrijving","Rekening","Tegenrekening","Code","Af Bij","Bedrag (EUR)","Mutatiesoort","Mededelingen"',
      '"20260302","BNPL Provider BV","NL69INGB0123456789","NL44RABO0123456789","OV","Bij","1.250,00","Overschrijving","Naam: BNPL Provider BV Omschrijving: Uitbetaling PO2026030200000014"',
      '"20260303","Albert Heijn","NL69INGB0123456789","","BA","Af","12,34","Betaalautomaat","Pasvolgnr: 001"',
    ),
    lines: [
      ['2026-03-02', null, 125000n, 'credit', 'EUR', 'BNPL Provider BV', 'NL44RABO0123456789', null, null, 'Naam: BNPL Provider BV Omschrijving: Uitbetaling PO2026030200000014', 'NL69INGB0123456789'],
      ['2026-03-03', null, 1234n, 'debit', 'EUR', 'Albert Heijn', null, null, null, 'Pasvolgnr: 001', 'NL69INGB0123456789'],
    ],
  },
  {
    profile: 'Rabobank',
    country: 'NL',
    text: rows(
      '"IBAN/BBAN","Munt","BIC","Volgnr","Datum","Rentedatum","Bedrag","Saldo na trn","Tegenrekening IBAN/BBAN","Naam tegenpartij","Naam uiteindelijke partij","Naam initiërende partij","BIC tegenpartij","Code","Batch ID","Transactiereferentie","Machtigingskenmerk","Incassant ID","Betalingskenmerk","Omschrijving-1","Omschrijving-2","Omschrijving-3","Reden retour","Oorspr bedrag","Oorspr munt","Koers"',
      '"NL44RABO0123456789","EUR","RABONL2U","000000000000007001","2026-03-04","2026-03-04","+2.000,50","+3.000,50","NL69INGB0123456789","BNPL Provider BV","","","INGBNL2A","cb","","PO2026030400000015","","","","Uitbetaling","week 10","","","","",""',
      '"NL44RABO0123456789","EUR","RABONL2U","000000000000007002","2026-03-05","2026-03-05","-0,50","+3.000,00","","Rabobank","","","","db","","","","","","Kosten","","","","","",""',
    ),
    lines: [
      ['2026-03-04', '2026-03-04', 200050n, 'credit', 'EUR', 'BNPL Provider BV', 'NL69INGB0123456789', 'PO2026030400000015', '000000000000007001', 'Uitbetaling week 10', 'NL44RABO0123456789'],
      ['2026-03-05', '2026-03-05', 50n, 'debit', 'EUR', 'Rabobank', null, null, '000000000000007002', 'Kosten', 'NL44RABO0123456789'],
    ],
  },
  {
    profile: 'ABN AMRO (TXT/TAB export, no header)',
    country: 'NL',
    text: rows(
      '517852257\tEUR\t20260306\t1000,00\t1880,00\t20260306\t880,00\tSEPA Overboeking IBAN: NL69INGB0123456789 Naam: BNPL Provider BV Omschrijving: PO2026030600000016',
      '517852257\tEUR\t20260307\t1880,00\t1867,50\t20260307\t-12,50\tBEA NR:ABC123 07.03.26/09.15 Hema',
    ),
    lines: [
      ['2026-03-06', '2026-03-06', 88000n, 'credit', 'EUR', null, null, null, null, 'SEPA Overboeking IBAN: NL69INGB0123456789 Naam: BNPL Provider BV Omschrijving: PO2026030600000016', '517852257'],
      ['2026-03-07', '2026-03-07', 1250n, 'debit', 'EUR', null, null, null, null, 'BEA NR:ABC123 07.03.26/09.15 Hema', '517852257'],
    ],
  },
  {
    profile: 'de Volksbank (ASN Bank, SNS, RegioBank; no header)',
    country: 'NL',
    text: rows(
      '08-03-2026,NL12ASNB0123456789,NL69INGB0123456789,BNPL Provider BV,,,,EUR,100.00,EUR,450.25,08-03-2026,08-03-2026,8810,IOB,55501,PO2026030800000017,\'Uitbetaling maart\',3',
      '09-03-2026,NL12ASNB0123456789,,,,,,EUR,550.25,EUR,-25.00,09-03-2026,09-03-2026,8820,KST,55502,,\'Kosten\',3',
    ),
    lines: [
      ['2026-03-08', '2026-03-08', 45025n, 'credit', 'EUR', 'BNPL Provider BV', 'NL69INGB0123456789', 'PO2026030800000017', '55501', "'Uitbetaling maart'", 'NL12ASNB0123456789'],
      ['2026-03-09', '2026-03-09', 2500n, 'debit', 'EUR', null, null, null, '55502', "'Kosten'", 'NL12ASNB0123456789'],
    ],
  },
  {
    profile: 'Triodos Bank (no header)',
    country: 'NL',
    text: rows(
      '10-03-2026,NL27TRIO0123456789,"1.100,00",Credit,BNPL Provider BV,NL69INGB0123456789,ET,Uitbetaling PO2026031000000018',
      '11-03-2026,NL27TRIO0123456789,"15,00",Debet,Drukkerij,NL44RABO0123456789,IC,Factuur 9',
    ),
    lines: [
      ['2026-03-10', null, 110000n, 'credit', 'EUR', 'BNPL Provider BV', 'NL69INGB0123456789', null, null, 'Uitbetaling PO2026031000000018', 'NL27TRIO0123456789'],
      ['2026-03-11', null, 1500n, 'debit', 'EUR', 'Drukkerij', 'NL44RABO0123456789', null, null, 'Factuur 9', 'NL27TRIO0123456789'],
    ],
    accountCurrencies: { NL27TRIO0123456789: 'EUR' },
  },
  {
    profile: 'bunq',
    country: 'NL',
    text: rows(
      '"Date","Interest Date","Amount","Account","Counterparty","Name","Description"',
      '"2026-03-12","2026-03-12","640.00","NL91BUNQ0123456789","NL69INGB0123456789","BNPL Provider BV","Uitbetaling PO2026031200000019"',
    ),
    lines: [['2026-03-12', '2026-03-12', 64000n, 'credit', 'EUR', 'BNPL Provider BV', 'NL69INGB0123456789', null, null, 'Uitbetaling PO2026031200000019', 'NL91BUNQ0123456789']],
    accountCurrencies: { NL91BUNQ0123456789: 'EUR' },
  },
  {
    profile: 'Erste Bank und Sparkassen (George)',
    country: 'AT',
    text: rows(
      'Buchungsdatum;Partnername;Partner IBAN;Partner BIC;Partner Kontonummer;Partner Bank-Code (BLZ);Betrag;Währung;Buchungs-Details;Zahlungsreferenz;Valutadatum',
      `13.03.2026;BNPL Provider GmbH;${PROV};BNPADEFF;;;1.999,99;EUR;Gutschrift Auszahlung;PO2026031300000020;13.03.2026`,
    ),
    lines: [['2026-03-13', '2026-03-13', 199999n, 'credit', 'EUR', 'BNPL Provider GmbH', PROV, 'PO2026031300000020', null, 'Gutschrift Auszahlung', null]],
  },
  {
    profile: 'Raiffeisen Österreich (ELBA, no header)',
    country: 'AT',
    text: rows(
      '14.03.2026;Gutschrift BNPL Provider GmbH PO2026031400000021;14.03.2026;+300,00;EUR;14.03.2026 10:11:12:000',
      '15.03.2026;Bezahlung Karte Billa;15.03.2026;-18,40;EUR;15.03.2026 08:00:00:000',
    ),
    lines: [
      ['2026-03-14', '2026-03-14', 30000n, 'credit', 'EUR', null, null, null, null, 'Gutschrift BNPL Provider GmbH PO2026031400000021', null],
      ['2026-03-15', '2026-03-15', 1840n, 'debit', 'EUR', null, null, null, null, 'Bezahlung Karte Billa', null],
    ],
  },
  {
    profile: 'BAWAG (easybank; no header)',
    country: 'AT',
    text: rows('AT611904300234573201;Auszahlung PO2026031600000022 BNPL Provider;16.03.2026;16.03.2026;+1.234,00;EUR'),
    lines: [['2026-03-16', '2026-03-16', 123400n, 'credit', 'EUR', null, null, null, null, 'Auszahlung PO2026031600000022 BNPL Provider', 'AT611904300234573201']],
  },
  {
    profile: 'PostFinance',
    country: 'CH',
    text: rows(
      'Datum von:;01.03.2026',
      'Buchungsart:;Alle Buchungen',
      'Konto:;CH9300762011623852957',
      'Währung:;CHF',
      'Buchungsdatum;Avisierungstext;Gutschrift in CHF;Lastschrift in CHF;Valuta;Saldo in CHF',
      "17.03.2026;GUTSCHRIFT BNPL Provider AG PO2026031700000023;11'373.94;;17.03.2026;12'000.00",
      '18.03.2026;KAUF/DIENSTLEISTUNG Migros;;-42.50;18.03.2026;',
      '',
      'Disclaimer:',
      'Dies ist kein Kontoauszug.',
    ),
    lines: [
      ['2026-03-17', '2026-03-17', 1137394n, 'credit', 'CHF', null, null, null, null, 'GUTSCHRIFT BNPL Provider AG PO2026031700000023', 'CH9300762011623852957'],
      ['2026-03-18', '2026-03-18', 4250n, 'debit', 'CHF', null, null, null, null, 'KAUF/DIENSTLEISTUNG Migros', 'CH9300762011623852957'],
    ],
  },
  {
    profile: 'UBS',
    country: 'CH',
    text: rows(
      'Kontonummer:;0235-00123456.01',
      'IBAN:;CH5100235235123456013',
      'Abschlussdatum;Abschlusszeit;Buchungsdatum;Valutadatum;Währung;Belastung;Gutschrift;Einzelbetrag;Saldo;Transaktions-Nr.;Beschreibung1;Beschreibung2;Beschreibung3;Fussnoten',
      "2026-03-19;10:00:00;2026-03-19;2026-03-19;CHF;;2'500.00;;5'000.00;9930123AB;BNPL Provider AG;Gutschrift;PO2026031900000024;",
      '2026-03-20;11:00:00;2026-03-20;2026-03-21;CHF;-120.00;;;4\'880.00;9930124AB;Swisscom;Rechnung;;',
    ),
    lines: [
      ['2026-03-19', '2026-03-19', 250000n, 'credit', 'CHF', null, null, null, '9930123AB', 'BNPL Provider AG Gutschrift PO2026031900000024', 'CH5100235235123456013'],
      ['2026-03-20', '2026-03-21', 12000n, 'debit', 'CHF', null, null, null, '9930124AB', 'Swisscom Rechnung', 'CH5100235235123456013'],
    ],
  },
  {
    profile: 'Raiffeisen Schweiz',
    country: 'CH',
    text: rows(
      'IBAN;Booked At;Text;Credit/Debit Amount;Balance;Valuta Date',
      'CH9380808001234567890;2026-03-21 00:00:00.0;Gutschrift BNPL Provider AG PO2026032100000025;860.00;1860.00;2026-03-21 00:00:00.0',
    ),
    lines: [['2026-03-21', '2026-03-21', 86000n, 'credit', 'CHF', null, null, null, null, 'Gutschrift BNPL Provider AG PO2026032100000025', 'CH9380808001234567890']],
    accountCurrencies: { CH9380808001234567890: 'CHF' },
  },
  {
    profile: 'Barclays',
    country: 'GB',
    text: rows(
      'Number,Date,Account,Amount,Subcategory,Memo',
      ' ,02/03/2026,20-00-00 12345678,420.00,Bank Credit,BNPL PROVIDER LTD PO2026030200000026',
      ' ,03/03/2026,20-00-00 12345678,-19.99,Direct Debit,ENERGY CO',
    ),
    lines: [
      ['2026-03-02', null, 42000n, 'credit', 'GBP', null, null, null, null, 'BNPL PROVIDER LTD PO2026030200000026', '20-00-0012345678'],
      ['2026-03-03', null, 1999n, 'debit', 'GBP', null, null, null, null, 'ENERGY CO', '20-00-0012345678'],
    ],
    accountCurrencies: { '20-00-0012345678': 'GBP' },
  },
  {
    profile: 'Lloyds Bank (Halifax, Bank of Scotland)',
    country: 'GB',
    text: rows(
      'Transaction Date,Transaction Type,Sort Code,Account Number,Transaction Description,Debit Amount,Credit Amount,Balance',
      "06/03/2026,BGC,'30-00-00,12345678,BNPL PROVIDER LTD PO2026030600000028,,300.00,1300.00",
      "07/03/2026,DD,'30-00-00,12345678,COUNCIL TAX,120.00,,1180.00",
    ),
    lines: [
      ['2026-03-06', null, 30000n, 'credit', 'GBP', null, null, null, null, 'BNPL PROVIDER LTD PO2026030600000028', '12345678'],
      ['2026-03-07', null, 12000n, 'debit', 'GBP', null, null, null, null, 'COUNCIL TAX', '12345678'],
    ],
    accountCurrencies: { '12345678': 'GBP' },
  },
  {
    profile: 'NatWest (RBS)',
    country: 'GB',
    text: rows(
      'Date, Type, Description, Value, Balance, Account Name, Account Number',
      "8 Mar 2026,BAC,\"'BNPL PROVIDER LTD , PO2026030800000029\",555.00,1555.00,\"'MUSTER LTD\",\"'601234-87654321\"",
    ),
    lines: [['2026-03-08', null, 55500n, 'credit', 'GBP', null, null, null, null, "'BNPL PROVIDER LTD , PO2026030800000029", "'601234-87654321"]],
    accountCurrencies: { "'601234-87654321": 'GBP' },
  },
  {
    profile: 'Nationwide',
    country: 'GB',
    text: rows(
      '"Account Name:","FlexAccount ****1234"',
      '"Account Balance:","£1,234.56"',
      '"Available Balance: ","£1,234.56"',
      '',
      '"Date","Transaction type","Description","Paid out","Paid in","Balance"',
      '"09 Mar 2026","Bank credit","BNPL PROVIDER LTD PO2026030900000030","","£1,000.00","£1,234.56"',
      '"10 Mar 2026","Contactless payment","CAFE","£3.40","","£1,231.16"',
    ),
    lines: [
      ['2026-03-09', null, 100000n, 'credit', 'GBP', null, null, null, null, 'BNPL PROVIDER LTD PO2026030900000030', 'FLEXACCOUNT****1234'],
      ['2026-03-10', null, 340n, 'debit', 'GBP', null, null, null, null, 'CAFE', 'FLEXACCOUNT****1234'],
    ],
  },
  {
    profile: 'Monzo',
    country: 'GB',
    text: rows(
      'Transaction ID,Date,Time,Type,Name,Emoji,Category,Amount,Currency,Local amount,Local currency,Notes and #tags,Address,Receipt,Description,Category split,Money Out,Money In',
      'tx_0001,11/03/2026,09:00:00,Faster payment,BNPL Provider Ltd,,income,250.00,GBP,250.00,GBP,,,,PO2026031100000031,,,250.00',
    ),
    lines: [['2026-03-11', null, 25000n, 'credit', 'GBP', 'BNPL Provider Ltd', null, null, 'tx_0001', 'PO2026031100000031', null]],
  },
  {
    profile: 'Starling Bank',
    country: 'GB',
    text: rows(
      'Date,Counter Party,Reference,Type,Amount (GBP),Balance (GBP),Spending Category,Notes',
      '12/03/2026,BNPL Provider Ltd,PO2026031200000032,FASTER PAYMENT,180.00,980.00,INCOME,',
      '13/03/2026,Printer Co,INV-4,CARD,-24.00,956.00,GENERAL,',
    ),
    lines: [
      ['2026-03-12', null, 18000n, 'credit', 'GBP', 'BNPL Provider Ltd', null, null, null, 'PO2026031200000032', null],
      ['2026-03-13', null, 2400n, 'debit', 'GBP', 'Printer Co', null, null, null, 'INV-4', null],
    ],
  },
  {
    profile: 'AIB',
    country: 'IE',
    text: rows(
      'Posted Account, Posted Transactions Date, Description1, Description2, Description3, Debit Amount, Credit Amount,Balance,Posted Currency,Transaction Type,Local Currency Amount,Local Currency',
      '"IE29AIBK93115212345678",14/03/2026,"BNPL PROVIDER","PO2026031400000033","",,"700.00","1700.00",EUR,"Credit","700.00",EUR',
      '"IE29AIBK93115212345678",15/03/2026,"ESB ENERGY","DD","",65.00,,"1635.00",EUR,"Debit","65.00",EUR',
    ),
    lines: [
      ['2026-03-14', null, 70000n, 'credit', 'EUR', null, null, null, null, 'BNPL PROVIDER PO2026031400000033', 'IE29AIBK93115212345678'],
      ['2026-03-15', null, 6500n, 'debit', 'EUR', null, null, null, null, 'ESB ENERGY DD', 'IE29AIBK93115212345678'],
    ],
  },
  {
    profile: 'KBC',
    country: 'BE',
    text: rows(
      'Rekeningnummer;Rubrieknaam;Naam;Munt;Afschriftnummer;Datum;Omschrijving;Valuta;Bedrag;Saldo;credit;debet;rekeningnummer tegenpartij;BIC tegenpartij;Naam tegenpartij;Adres tegenpartij;gestructureerde mededeling;Vrije mededeling',
      'BE68539007547034;Zichtrekening;Muster BV;EUR;00003;16/03/2026;OVERSCHRIJVING;16/03/2026;1.500,00;3.500,00;1.500,00;;NL69INGB0123456789;INGBNL2A;BNPL Provider BV;;;Uitbetaling PO2026031600000034',
    ),
    lines: [['2026-03-16', '2026-03-16', 150000n, 'credit', 'EUR', 'BNPL Provider BV', 'NL69INGB0123456789', null, null, 'OVERSCHRIJVING Uitbetaling PO2026031600000034', 'BE68539007547034']],
  },
  {
    profile: 'Belfius',
    country: 'BE',
    text: rows(
      'Boekingsdatum vanaf;01/03/2026',
      'Rekening;Boekingsdatum;Rekeninguittrekselnummer;Transactienummer;Rekening tegenpartij;Naam tegenpartij bevat;Straat en nummer;Postcode en plaats;Transactie;Valutadatum;Bedrag;Devies;BIC;Landcode;Mededelingen',
      'BE62510007547061;17/03/2026;3;12;BE71096123456769;Drukkerij NV;Straat 1;1000 Brussel;Europese overschrijving;17/03/2026;-250,00;EUR;GKCCBEBB;BE;Factuur 2026-9',
    ),
    lines: [['2026-03-17', '2026-03-17', 25000n, 'debit', 'EUR', 'Drukkerij NV', 'BE71096123456769', null, null, 'Factuur 2026-9', 'BE62510007547061']],
  },
  {
    profile: 'BNP Paribas Fortis',
    country: 'BE',
    text: rows(
      'Volgnummer;Uitvoeringsdatum;Valutadatum;Bedrag;Valuta rekening;Rekeningnummer;Type verrichting;Tegenpartij;Naam van de tegenpartij;Mededeling;Details;Status;Reden van weigering',
      '2026-0041;18/03/2026;18/03/2026;900,00;EUR;BE68539007547034;Overschrijving;NL69INGB0123456789;BNPL Provider BV;PO2026031800000035;;Geaccepteerd;',
      '2026-0042;19/03/2026;19/03/2026;-50,00;EUR;BE68539007547034;Overschrijving;BE71096123456769;Iemand;Gift;;Geweigerd;Saldo',
    ),
    lines: [['2026-03-18', '2026-03-18', 90000n, 'credit', 'EUR', 'BNPL Provider BV', 'NL69INGB0123456789', null, '2026-0041', 'PO2026031800000035', 'BE68539007547034']],
  },
  {
    profile: 'Société Générale',
    country: 'FR',
    text: rows(
      '="FR7630003000000000000000000";Compte courant;',
      '',
      "Date de l'opération;Libellé;Détail de l'écriture;Montant de l'opération;Devise",
      '20/03/2026;VIR RECU BNPL;PO2026032000000036 BNPL PROVIDER SAS;1 200,00;EUR',
      '21/03/2026;CARTE X1234;CARTE X1234 20/03 BOULANGERIE;-6,80;EUR',
      'Solde au 21/03/2026;;;5 000,00;EUR',
    ),
    lines: [
      ['2026-03-20', null, 120000n, 'credit', 'EUR', null, null, null, null, 'VIR RECU BNPL PO2026032000000036 BNPL PROVIDER SAS', null],
      ['2026-03-21', null, 680n, 'debit', 'EUR', null, null, null, null, 'CARTE X1234 CARTE X1234 20/03 BOULANGERIE', null],
    ],
  },
  {
    profile: 'Fio banka',
    country: 'CZ',
    text: rows(
      '"accountId";"2000123456"',
      '"bankId";"2010"',
      '"currency";"CZK"',
      '"iban";"CZ6520100000002000123456"',
      '"openingBalance";"10000,00"',
      '',
      '"ID operace";"Datum";"Objem";"Měna";"Protiúčet";"Název protiúčtu";"Kód banky";"Název banky";"KS";"VS";"SS";"Poznámka";"Zpráva pro příjemce";"Typ";"Provedl";"Upřesnění";"Komentář";"BIC";"ID pokynu"',
      '"26001";"22.03.2026";"15000,00";"CZK";"DE02120300000000202051";"BNPL Provider GmbH";"";"";"";"";"";"";"Vyplata PO2026032200000037";"Příjem převodem";"";"";"";"";"71001"',
      '"26002";"23.03.2026";"-350,50";"CZK";"123456789";"ČEZ";"0800";"";"";"1234";"";"Záloha";"";"Platba převodem";"";"";"";"";"71002"',
    ),
    lines: [
      ['2026-03-22', null, 1500000n, 'credit', 'CZK', 'BNPL Provider GmbH', PROV, null, '26001', 'Vyplata PO2026032200000037', 'CZ6520100000002000123456'],
      ['2026-03-23', null, 35050n, 'debit', 'CZK', 'ČEZ', '123456789', null, '26002', 'Záloha', 'CZ6520100000002000123456'],
    ],
  },
  {
    profile: 'Swedbank (Lithuania, Latvia, Estonia)',
    country: 'LT',
    text: rows(
      '"Client account","Row type","Date","Beneficiary/Payer","Details","Amount","Currency","Debit/Credit","Archive ID","Payment type","Reference number","Document number"',
      '"LT127300010123456789","10","2026-03-01","","Opening balance","1000.00","EUR","K","","","",""',
      '"LT127300010123456789","20","2026-03-24","BNPL Provider GmbH","Payout PO2026032400000038","640.00","EUR","K","2026032400123","MK","PO2026032400000038",""',
      '"LT127300010123456789","20","2026-03-25","Telia","Invoice 55","19.90","EUR","D","2026032500124","MK","",""',
      '"LT127300010123456789","82","2026-03-31","","Turnover","659.90","EUR","K","","","",""',
      '"LT127300010123456789","86","2026-03-31","","closing balance","1620.10","EUR","K","","","",""',
    ),
    lines: [
      ['2026-03-24', null, 64000n, 'credit', 'EUR', 'BNPL Provider GmbH', null, 'PO2026032400000038', '2026032400123', 'Payout PO2026032400000038', 'LT127300010123456789'],
      ['2026-03-25', null, 1990n, 'debit', 'EUR', 'Telia', null, null, '2026032500124', 'Invoice 55', 'LT127300010123456789'],
    ],
  },
  {
    profile: 'Santander España',
    country: 'ES',
    text: rows('Fecha Operación;Fecha Valor;Concepto;Importe;Divisa', '26/03/2026;26/03/2026;TRANSFERENCIA DE BNPL PROVIDER PO2026032600000039;2.345,60;EUR'),
    lines: [['2026-03-26', '2026-03-26', 234560n, 'credit', 'EUR', null, null, null, null, 'TRANSFERENCIA DE BNPL PROVIDER PO2026032600000039', null]],
  },
  {
    profile: 'Revolut',
    country: 'LT',
    text: rows(
      'Type,Product,Started Date,Completed Date,Description,Amount,Fee,Currency,State,Balance',
      'TOPUP,Current,2026-03-27 09:00:00,2026-03-27 09:01:00,Payment from BNPL Provider PO2026032700000040,500.00,0.00,EUR,COMPLETED,500.00',
      'CARD_PAYMENT,Current,2026-03-28 12:00:00,,Amazon,-30.00,0.00,EUR,PENDING,',
      'CARD_PAYMENT,Current,2026-03-28 13:00:00,2026-03-28 13:05:00,Shop,-12.00,0.00,EUR,REVERTED,',
    ),
    lines: [['2026-03-27', null, 50000n, 'credit', 'EUR', null, null, null, null, 'Payment from BNPL Provider PO2026032700000040', null]],
  },
  {
    profile: 'Wise',
    country: 'GB',
    text: rows(
      '"TransferWise ID",Date,Amount,Currency,Description,"Payment Reference","Running Balance","Exchange From","Exchange To","Exchange Rate","Payer Name","Payee Name","Payee Account Number",Merchant,"Card Last Four Digits","Card Holder Full Name",Attachment,Note,"Total fees"',
      'TRANSFER-1001,29-03-2026,810.00,EUR,"Received money from BNPL Provider","PO2026032900000041",810.00,,,,"BNPL Provider GmbH",,,,,,,,0.00',
      'TRANSFER-1002,30-03-2026,-100.00,EUR,"Sent money to Supplier","INV 7",710.00,,,,,"Supplier BV","NL69INGB0123456789",,,,,,0.00',
    ),
    lines: [
      ['2026-03-29', null, 81000n, 'credit', 'EUR', 'BNPL Provider GmbH', null, null, 'TRANSFER-1001', 'Received money from BNPL Provider PO2026032900000041', null],
      ['2026-03-30', null, 10000n, 'debit', 'EUR', 'Supplier BV', null, null, 'TRANSFER-1002', 'Sent money to Supplier INV 7', null],
    ],
  },
  {
    profile: 'PayPal (activity download)',
    country: '',
    text: rows(
      '"Date","Time","TimeZone","Name","Type","Status","Currency","Gross","Fee","Net","From Email Address","To Email Address","Transaction ID","Subject","Note","Balance"',
      '"31/03/2026","10:00:00","CET","Kunde AG","Website Payment","Completed","EUR","100.00","-2.89","97.11","kunde@example.com","shop@example.com","7AB12345CD6789012","Order 1001","","97.11"',
      '"31/03/2026","11:00:00","CET","Kunde B","Website Payment","Pending","EUR","50.00","-1.70","48.30","b@example.com","shop@example.com","8AB12345CD6789013","Order 1002","",""',
    ),
    lines: [['2026-03-31', null, 9711n, 'credit', 'EUR', 'Kunde AG', null, null, '7AB12345CD6789012', 'Order 1001', null]],
  },
];
