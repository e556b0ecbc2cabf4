/**
 * The words the rules planner knows in French, German and Spanish, mapped onto the canonical
 * English lemmas that the catalog's hints use. Only instructions are translated (verbs, nouns,
 * prepositions, connectives); the texts a user wants sent are cut out before, untouched.
 * Longer phrases are replaced first. Dates and times are not here: chrono-node parses them with
 * its own locale of the language.
 */
export type Lang = 'en' | 'fr' | 'de' | 'es';

/** Words that are frequent in a language and rare in the others: the language with most hits wins. */
const MARKERS: Record<Exclude<Lang, 'en'>, readonly string[]> = {
  fr: ['le', 'la', 'les', 'dans', 'pour', 'avec', 'une', 'des', 'est', 'demain', 'sur', 'du', 'envoie', 'envoyer', 'crée', 'créer', 'courriel', 'réunion', 'à', 'au', 'et', 'je', 'mon', 'mes', 'suis', 'ferme', 'ajoute', 'liste', 'publie', 'qui', 'dire'],
  de: ['der', 'die', 'das', 'und', 'mit', 'dem', 'ein', 'eine', 'im', 'morgen', 'für', 'ist', 'bitte', 'sende', 'schicke', 'erstelle', 'nachricht', 'den', 'an', 'um', 'uhr', 'ich', 'mein', 'meine', 'schließe', 'zeige', 'betreff', 'dass', 'kanal', 'auf', 'zu', 'bin'],
  es: ['el', 'los', 'las', 'en', 'para', 'con', 'una', 'que', 'mañana', 'del', 'envía', 'enviar', 'manda', 'crea', 'correo', 'reunión', 'mensaje', 'y', 'mi', 'mis', 'estoy', 'cierra', 'añade', 'lista', 'publica', 'diciendo', 'al', 'por', 'favor'],
};

/** Phrases and words per language → canonical English (lowercase; phrases before words). */
const TRANSLATIONS: Record<Exclude<Lang, 'en'>, Readonly<Record<string, string>>> = {
  fr: {
    'est-ce que je suis libre': 'am i free',
    'suis-je libre': 'am i free',
    'suis-je disponible': 'am i available',
    'est-ce que je suis disponible': 'am i available',
    'je suis libre': 'am i free',
    'base de données': 'database',
    'demande de fusion': 'pull request',
    'pull request': 'pull request',
    'et ensuite': 'then',
    'et puis': 'then',
    'après ça': 'then',
    'message privé': 'direct message',
    'par e-mail': 'by email',
    'par mail': 'by email',
    'un e-mail': 'an email',
    's’il te plaît': 'please',
    "s'il te plaît": 'please',
    's’il vous plaît': 'please',
    "s'il vous plaît": 'please',
    envoie: 'send', envoyer: 'send', envoyez: 'send', envoies: 'send', envoyes: 'send', transmets: 'forward', transfère: 'forward',
    publie: 'post', publier: 'post', publiez: 'post', poste: 'post', poster: 'post', postez: 'post',
    crée: 'create', créer: 'create', créez: 'create', cree: 'create', creer: 'create',
    ouvre: 'open', ouvrir: 'open', ouvrez: 'open',
    ferme: 'close', fermer: 'close', fermez: 'close', clôture: 'close', clôturer: 'close', clos: 'close',
    rouvre: 'reopen', rouvrir: 'reopen',
    liste: 'list', lister: 'list', listez: 'list', affiche: 'show', afficher: 'show', affichez: 'show', montre: 'show', montrer: 'show', montrez: 'show', donne: 'give', donnez: 'give',
    cherche: 'search', chercher: 'search', cherchez: 'search', recherche: 'search', rechercher: 'search', trouve: 'find', trouver: 'find', trouvez: 'find',
    récupère: 'get', récupérer: 'get', obtiens: 'get', lis: 'read', lire: 'read', lisez: 'read',
    ajoute: 'add', ajouter: 'add', ajoutez: 'add', rajoute: 'add',
    commente: 'comment', commenter: 'comment', commentez: 'comment', commentaire: 'comment',
    réponds: 'reply', répondre: 'reply', répondez: 'reply',
    planifie: 'schedule', planifier: 'schedule', planifiez: 'schedule', programme: 'schedule', programmer: 'schedule', organise: 'schedule', organiser: 'schedule', réserve: 'book', réserver: 'book',
    fusionne: 'merge', fusionner: 'merge', fusionnez: 'merge',
    invite: 'invite', inviter: 'invite', invitez: 'invite',
    rédige: 'draft', rédiger: 'draft', rédigez: 'draft', prépare: 'draft', préparer: 'draft', brouillon: 'draft',
    écris: 'write', écrire: 'write', écrivez: 'write',
    dis: 'tell', dire: 'tell', dites: 'tell', préviens: 'tell', prévenir: 'tell', informe: 'tell',
    mets: 'put', mettre: 'put', étiquette: 'label', étiquettes: 'labels',
    supprime: 'delete', supprimer: 'delete', supprimez: 'delete', efface: 'delete',
    courriel: 'email', courriels: 'emails', mail: 'email', mails: 'emails', 'e-mail': 'email', 'e-mails': 'emails', email: 'email', emails: 'emails',
    message: 'message', messages: 'messages', canal: 'channel', canaux: 'channels', chaîne: 'channel', salon: 'channel',
    réunion: 'meeting', réunions: 'meetings', 'rendez-vous': 'meeting', rdv: 'meeting', événement: 'event', événements: 'events', evenement: 'event', agenda: 'calendar', calendrier: 'calendar',
    problème: 'issue', problèmes: 'issues', ticket: 'issue', tickets: 'issues', anomalie: 'bug', dépôt: 'repository', dépôts: 'repositories', référentiel: 'repository',
    page: 'page', pages: 'pages', note: 'note', notes: 'notes', boîte: 'inbox', 'boîte de réception': 'inbox',
    libre: 'free', disponible: 'available', occupé: 'busy',
    dans: 'in', sur: 'on', à: 'to', au: 'to', aux: 'to', pour: 'for', avec: 'with', de: 'of', du: 'of', des: 'the', le: 'the', la: 'the', les: 'the', 'l’': 'the ', "l'": 'the ', un: 'a', une: 'a', et: 'and', puis: 'then', ensuite: 'then', mon: 'my', ma: 'my', mes: 'my', moi: 'me', je: 'i',
    derniers: 'last', dernières: 'last', dernier: 'last', dernière: 'last', ouverts: 'open', ouvertes: 'open', ouvert: 'open', fermés: 'closed', fermées: 'closed', non: 'un', lus: 'read',
    titre: 'title', intitulé: 'titled', intitulée: 'titled', appelé: 'called', appelée: 'called', nommé: 'named', nommée: 'named', objet: 'subject', sujet: 'subject',
  },
  de: {
    'bin ich frei': 'am i free',
    'bin ich verfügbar': 'am i available',
    'habe ich zeit': 'am i free',
    'hab ich zeit': 'am i free',
    'pull request': 'pull request',
    'und dann': 'then',
    'danach': 'then',
    'lege an': 'create',
    'leg an': 'create',
    'füge hinzu': 'add',
    'füg hinzu': 'add',
    sende: 'send', senden: 'send', sendet: 'send', schicke: 'send', schick: 'send', schicken: 'send', verschicke: 'send', leite: 'forward',
    poste: 'post', posten: 'post', veröffentliche: 'post', teile: 'share',
    erstelle: 'create', erstellen: 'create', erstell: 'create', erzeuge: 'create', anlegen: 'create', lege: 'create', leg: 'create',
    öffne: 'open', öffnen: 'open', eröffne: 'open',
    schließe: 'close', schliesse: 'close', schließen: 'close', schliessen: 'close', schließ: 'close',
    'öffne erneut': 'reopen', wiedereröffne: 'reopen',
    liste: 'list', auflisten: 'list', zeige: 'show', zeig: 'show', zeigen: 'show', gib: 'give',
    suche: 'search', such: 'search', suchen: 'search', finde: 'find', finden: 'find',
    hole: 'get', hol: 'get', abrufen: 'get', lies: 'read', lese: 'read', lesen: 'read',
    füge: 'add', hinzufügen: 'add', ergänze: 'add',
    kommentiere: 'comment', kommentieren: 'comment', kommentar: 'comment',
    antworte: 'reply', antworten: 'reply', beantworte: 'reply',
    plane: 'schedule', planen: 'schedule', vereinbare: 'schedule', buche: 'book', buchen: 'book', trage: 'add', eintragen: 'add',
    merge: 'merge', mergen: 'merge', zusammenführen: 'merge', führe: 'merge',
    lade: 'invite', einladen: 'invite',
    entwerfe: 'draft', entwirf: 'draft', entwurf: 'draft', vorbereiten: 'draft', bereite: 'draft',
    schreibe: 'write', schreib: 'write', schreiben: 'write',
    sag: 'tell', sage: 'tell', sagen: 'tell', informiere: 'tell', benachrichtige: 'tell',
    lösche: 'delete', löschen: 'delete', entferne: 'delete',
    'e-mail': 'email', 'e-mails': 'emails', email: 'email', emails: 'emails', mail: 'email', mails: 'emails', nachricht: 'message', nachrichten: 'messages', kanal: 'channel', kanäle: 'channels', channel: 'channel',
    besprechung: 'meeting', besprechungen: 'meetings', termin: 'meeting', termine: 'meetings', meeting: 'meeting', treffen: 'meeting', ereignis: 'event', kalender: 'calendar',
    problem: 'issue', probleme: 'issues', issue: 'issue', issues: 'issues', ticket: 'issue', tickets: 'issues', fehler: 'bug', repository: 'repository', repo: 'repo', repositorys: 'repositories',
    seite: 'page', seiten: 'pages', notiz: 'note', notizen: 'notes', datenbank: 'database', posteingang: 'inbox',
    frei: 'free', verfügbar: 'available', beschäftigt: 'busy',
    im: 'in', in: 'in', auf: 'on', an: 'to', zu: 'to', zum: 'to', zur: 'to', für: 'for', mit: 'with', von: 'from', vom: 'from', der: 'the', die: 'the', das: 'the', den: 'the', dem: 'the', des: 'the', ein: 'a', eine: 'a', einen: 'a', einem: 'a', und: 'and', dann: 'then', mein: 'my', meine: 'my', meinen: 'my', meinem: 'my', mir: 'me', mich: 'me', ich: 'i', bitte: 'please', alle: 'all',
    letzten: 'last', letzte: 'last', offenen: 'open', offene: 'open', geschlossenen: 'closed', ungelesenen: 'unread', ungelesene: 'unread',
    titel: 'title', betreff: 'subject', namens: 'named', genannt: 'called',
  },
  es: {
    '¿estoy libre': 'am i free',
    'estoy libre': 'am i free',
    '¿estoy disponible': 'am i available',
    'estoy disponible': 'am i available',
    'tengo tiempo': 'am i free',
    'base de datos': 'database',
    'pull request': 'pull request',
    'solicitud de extracción': 'pull request',
    'y luego': 'then',
    'y después': 'then',
    'después de eso': 'then',
    'mensaje directo': 'direct message',
    'por favor': 'please',
    'correo electrónico': 'email',
    'correos electrónicos': 'emails',
    envía: 'send', envia: 'send', enviar: 'send', envíe: 'send', manda: 'send', mandar: 'send', mande: 'send', reenvía: 'forward',
    publica: 'post', publicar: 'post', publique: 'post', postea: 'post', comparte: 'share',
    crea: 'create', crear: 'create', cree: 'create', genera: 'create',
    abre: 'open', abrir: 'open', abra: 'open',
    cierra: 'close', cerrar: 'close', cierre: 'close',
    reabre: 'reopen', reabrir: 'reopen',
    lista: 'list', listar: 'list', enumera: 'list', muestra: 'show', mostrar: 'show', muéstrame: 'show me', dame: 'give me',
    busca: 'search', buscar: 'search', busque: 'search', encuentra: 'find', encontrar: 'find',
    obtén: 'get', obtener: 'get', trae: 'get', lee: 'read', leer: 'read',
    añade: 'add', añadir: 'add', agrega: 'add', agregar: 'add',
    comenta: 'comment', comentar: 'comment', comentario: 'comment',
    responde: 'reply', responder: 'reply', contesta: 'reply',
    programa: 'schedule', programar: 'schedule', agenda: 'schedule', agendar: 'schedule', reserva: 'book', reservar: 'book', organiza: 'schedule',
    fusiona: 'merge', fusionar: 'merge',
    invita: 'invite', invitar: 'invite',
    redacta: 'draft', redactar: 'draft', borrador: 'draft', prepara: 'draft', preparar: 'draft',
    escribe: 'write', escribir: 'write',
    di: 'tell', dile: 'tell', decir: 'tell', avisa: 'tell', avisar: 'tell', informa: 'tell',
    elimina: 'delete', eliminar: 'delete', borra: 'delete', borrar: 'delete',
    correo: 'email', correos: 'emails', email: 'email', emails: 'emails', mail: 'email', mensaje: 'message', mensajes: 'messages', canal: 'channel', canales: 'channels',
    reunión: 'meeting', reuniones: 'meetings', reunion: 'meeting', cita: 'appointment', citas: 'appointments', evento: 'event', eventos: 'events', calendario: 'calendar',
    incidencia: 'issue', incidencias: 'issues', problema: 'issue', problemas: 'issues', ticket: 'issue', tickets: 'issues', error: 'bug', repositorio: 'repository', repositorios: 'repositories',
    página: 'page', pagina: 'page', páginas: 'pages', nota: 'note', notas: 'notes', bandeja: 'inbox',
    libre: 'free', disponible: 'available', ocupado: 'busy', ocupada: 'busy',
    en: 'in', sobre: 'about', a: 'to', al: 'to the', para: 'for', con: 'with', de: 'of', del: 'of the', el: 'the', la: 'the', los: 'the', las: 'the', un: 'a', una: 'a', y: 'and', luego: 'then', después: 'then', mi: 'my', mis: 'my', me: 'me', yo: 'i',
    últimos: 'last', últimas: 'last', último: 'last', abiertos: 'open', abiertas: 'open', abierto: 'open', cerrados: 'closed', cerradas: 'closed', 'no leídos': 'unread', 'no leídas': 'unread',
    título: 'title', titulado: 'titled', titulada: 'titled', llamado: 'called', llamada: 'called', asunto: 'subject',
  },
};

/** Markers after which the text to send starts, in every language (cut out before translating). */
export const BODY_MARKERS: readonly string[] = [
  // English
  'saying that', 'saying', 'that says', 'which says', 'that reads', 'reading', 'with the message', 'with message', 'with the text', 'with text',
  'with the body', 'with body', 'with the content', 'with content', 'telling them that', 'telling them', 'telling everyone that', 'telling everyone',
  'to say that', 'to say', 'to tell them that', 'to tell them', 'to let them know that', 'to let them know', 'letting them know that', 'letting them know',
  'and say that', 'and say', 'and tell them that', 'and tell them', 'with the note', 'with a note saying', 'asking them to', 'asking',
  'the message', 'the text', 'body:', 'message:', 'text:',
  // French
  'pour dire que', 'pour dire', 'pour leur dire que', 'pour leur dire', 'disant que', 'disant', 'en disant que', 'en disant', 'qui dit que', 'qui dit',
  'avec le message', 'avec le texte', 'avec le contenu',
  // German
  'mit dem text', 'mit der nachricht', 'mit dem inhalt', 'mit text', 'und sage', 'und sag', 'und schreibe', 'dass',
  // Spanish
  'diciendo que', 'diciendo', 'que diga que', 'que diga', 'para decir que', 'para decir', 'con el mensaje', 'con el texto', 'con el contenido',
];

/** Markers after which a subject starts (ends at a body marker or a comma). */
export const SUBJECT_MARKERS: readonly string[] = [
  'with the subject line', 'with subject line', 'with the subject', 'with subject', 'subject line', 'subject:', 'subject', 'titled', 'entitled',
  "avec l'objet", 'avec l’objet', 'avec le sujet', 'objet :', 'objet:', 'objet',
  'mit dem betreff', 'mit betreff', 'betreff:', 'betreff',
  'con el asunto', 'con asunto', 'asunto:', 'asunto',
];

/** Markers after which a title or name starts. */
export const TITLE_MARKERS: readonly string[] = [
  'titled', 'entitled', 'called', 'named', 'with the title', 'with title', 'title:', 'title',
  'intitulé', 'intitulée', 'appelé', 'appelée', 'nommé', 'nommée', 'avec le titre',
  'mit dem titel', 'mit titel', 'namens', 'genannt',
  'titulado', 'titulada', 'llamado', 'llamada', 'con el título', 'con título',
];

/** Chat shorthand and frequent misspellings whose edit distance is too far or too risky. */
export const SHORTHAND: Readonly<Record<string, string>> = {
  plz: 'please', pls: 'please', pleas: 'please', msg: 'message', msgs: 'messages', mtg: 'meeting', mtgs: 'meetings', cal: 'calendar',
  tmrw: 'tomorrow', tmr: 'tomorrow', tmrow: 'tomorrow', tomorow: 'tomorrow', tommorow: 'tomorrow', tommorrow: 'tomorrow', '2moro': 'tomorrow',
  snd: 'send', sned: 'send', sendd: 'send', emial: 'email', emal: 'email', eamil: 'email', mial: 'mail', repo: 'repo', repos: 'repos',
  isue: 'issue', isssue: 'issue', issu: 'issue', isuue: 'issue', chanel: 'channel', chnnel: 'channel', chanell: 'channel', schedual: 'schedule',
  shedule: 'schedule', scedule: 'schedule', calender: 'calendar', calandar: 'calendar', meetting: 'meeting', meting: 'meeting', mesage: 'message',
  messsage: 'message', massage: 'message', creat: 'create', craete: 'create', crate: 'create', pst: 'post', lsit: 'list', lits: 'list',
  serach: 'search', seach: 'search', reciept: 'receipt', prs: 'prs', pr: 'pr', dm: 'dm', dms: 'dms', fyi: 'fyi', asap: 'asap', 'w/': 'with',
  notoin: 'notion', notin: 'notion', gihub: 'github', githb: 'github', guthub: 'github', slak: 'slack', slck: 'slack', gmial: 'gmail', gmai: 'gmail',
  clsoe: 'close', colse: 'close', mrege: 'merge', merg: 'merge', commnet: 'comment', coment: 'comment', lable: 'label', labl: 'label',
  avaliable: 'available', availble: 'available', availabe: 'available', fre: 'free', evnt: 'event', evet: 'event', agneda: 'agenda',
  drat: 'draft', darft: 'draft', raft: 'draft', repyl: 'reply', rpely: 'reply', invit: 'invite', invte: 'invite', pag: 'page',
};

export function detectLanguage(words: readonly string[]): Lang {
  let best: Lang = 'en';
  let bestHits = 1; // one stray word is not a language
  const english = words.filter((w) => ENGLISH_MARKERS.has(w)).length;
  for (const lang of ['fr', 'de', 'es'] as const) {
    const set = MARKER_SETS[lang];
    const hits = words.filter((w) => set.has(w)).length;
    if (hits > bestHits && hits > english) {
      best = lang;
      bestHits = hits;
    }
  }
  return best;
}

const ENGLISH_MARKERS = new Set(['the', 'a', 'an', 'to', 'in', 'and', 'with', 'for', 'of', 'my', 'is', 'on', 'me', 'it', 'please', 'that', 'from', 'about', 'at']);
const MARKER_SETS = Object.fromEntries(Object.entries(MARKERS).map(([l, ws]) => [l, new Set(ws)])) as Record<Exclude<Lang, 'en'>, Set<string>>;

/** Phrase list of a language, longest first, for left-to-right replacement. */
const PHRASES = Object.fromEntries(
  Object.entries(TRANSLATIONS).map(([lang, table]) => [lang, Object.keys(table).sort((a, b) => b.length - a.length)]),
) as Record<Exclude<Lang, 'en'>, string[]>;

/** Translates an instruction (lowercase, quotes masked) of `lang` into canonical English words. */
export function translate(text: string, lang: Lang): string {
  if (lang === 'en') return text;
  const table = TRANSLATIONS[lang];
  let out = ` ${text} `;
  for (const phrase of PHRASES[lang]) {
    if (!out.includes(phrase)) continue;
    const escaped = phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`(?<=[\\s(,;:¿¡])${escaped}(?=[\\s),;:.!?])`, 'gu'), table[phrase] ?? phrase);
  }
  return out.trim();
}

/** Every word of the lexicons (they are not typos). */
export const FOREIGN_WORDS: ReadonlySet<string> = new Set(
  Object.values(TRANSLATIONS).flatMap((t) => Object.keys(t).flatMap((k) => k.split(/\s+/))),
);
