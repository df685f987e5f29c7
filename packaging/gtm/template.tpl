___TERMS_OF_SERVICE___

By creating or modifying this file you agree to Google Tag Manager's Community
Template Gallery Developer Terms of Service available at
https://developers.google.com/tag-manager/gallery-tos (or such other URL as
Google may provide), as modified from time to time.


___INFO___

{
  "type": "TAG",
  "id": "cvt_temp_public_id",
  "version": 1,
  "securityGroups": [],
  "displayName": "CleanAds tracker (t.js)",
  "categories": [
    "CONVERSIONS",
    "LEAD_GENERATION"
  ],
  "brand": {
    "id": "brand_dummy",
    "displayName": "CleanAds"
  },
  "description": "Installs CleanAds' t.js from your own CleanAds server: visits, click identity and the site's lead forms, judged for junk before Meta hears of them. Fire it on All Pages.",
  "containerContexts": [
    "WEB"
  ]
}


___TEMPLATE_PARAMETERS___

[
  {
    "type": "TEXT",
    "name": "serverUrl",
    "displayName": "CleanAds server",
    "simpleValueType": true,
    "help": "Your CleanAds server's address, on your own subdomain, as the admin UI's Install box shows it: e.g. https://t.example.com",
    "valueHint": "https://t.example.com",
    "valueValidators": [
      {
        "type": "NON_EMPTY"
      },
      {
        "type": "REGEX",
        "args": [
          "^https://[A-Za-z0-9.-]+(:[0-9]+)?/?$"
        ],
        "errorMessage": "Give https:// and the server's name only, e.g. https://t.example.com"
      }
    ]
  },
  {
    "type": "TEXT",
    "name": "siteId",
    "displayName": "Site id",
    "simpleValueType": true,
    "help": "The site's id, as in the Install box's snippet (data-site).",
    "valueValidators": [
      {
        "type": "NON_EMPTY"
      },
      {
        "type": "REGEX",
        "args": [
          "^[a-z0-9_-]{1,63}$"
        ],
        "errorMessage": "Lower-case letters, digits, - or _"
      }
    ]
  },
  {
    "type": "CHECKBOX",
    "name": "followConsent",
    "checkboxText": "Follow Google Consent Mode (ad_storage)",
    "simpleValueType": true,
    "defaultValue": false,
    "help": "Tells t.js the visitor's ad_storage consent before it sends the first visit, and again whenever it changes. Leave it off when your consent banner calls cleanads.consent() itself, or the site's consent setting is 'implied'."
  }
]


___SANDBOXED_JS_FOR_WEB_TEMPLATE___

// CleanAds tracker: installs t.js from the advertiser's own CleanAds server.
// A tag template cannot set data-site on the script it injects: t.js must
// read its site from the ?site= of its own address (docs/tracker.md).
const injectScript = require('injectScript');
const encodeUriComponent = require('encodeUriComponent');
const copyFromWindow = require('copyFromWindow');
const createQueue = require('createQueue');
const isConsentGranted = require('isConsentGranted');
const addConsentListener = require('addConsentListener');
const callInWindow = require('callInWindow');
const log = require('logToConsole');

let base = data.serverUrl;
if (base.charAt(base.length - 1) === '/') {
  base = base.substring(0, base.length - 1);
}
const url = base + '/t.js?site=' + encodeUriComponent(data.siteId);

const loaded = copyFromWindow('cleanads');
if (loaded && loaded.v) {
  // Installed already (the one-line snippet, or this tag fired twice).
  data.gtmOnSuccess();
} else {
  if (data.followConsent) {
    // A call queued before t.js loads counts for its first visit.
    const push = createQueue('cleanads');
    push(['consent', isConsentGranted('ad_storage')]);
    addConsentListener('ad_storage', (consentType, granted) => {
      callInWindow('cleanads.consent', granted);
    });
  }
  log('CleanAds: loading', url);
  injectScript(url, data.gtmOnSuccess, data.gtmOnFailure, url);
}


___WEB_PERMISSIONS___

[
  {
    "instance": {
      "key": {
        "publicId": "inject_script",
        "versionId": "1"
      },
      "param": [
        {
          "key": "urls",
          "value": {
            "type": 2,
            "listItem": [
              {
                "type": 1,
                "string": "https://*/t.js*"
              },
              {
                "type": 1,
                "string": "https://*/t.v*.js*"
              }
            ]
          }
        }
      ]
    },
    "clientAnnotations": {
      "isEditedByUser": true
    },
    "isRequired": true
  },
  {
    "instance": {
      "key": {
        "publicId": "access_globals",
        "versionId": "1"
      },
      "param": [
        {
          "key": "keys",
          "value": {
            "type": 2,
            "listItem": [
              {
                "type": 3,
                "mapKey": [
                  {
                    "type": 1,
                    "string": "key"
                  },
                  {
                    "type": 1,
                    "string": "read"
                  },
                  {
                    "type": 1,
                    "string": "write"
                  },
                  {
                    "type": 1,
                    "string": "execute"
                  }
                ],
                "mapValue": [
                  {
                    "type": 1,
                    "string": "cleanads"
                  },
                  {
                    "type": 8,
                    "boolean": true
                  },
                  {
                    "type": 8,
                    "boolean": true
                  },
                  {
                    "type": 8,
                    "boolean": false
                  }
                ]
              },
              {
                "type": 3,
                "mapKey": [
                  {
                    "type": 1,
                    "string": "key"
                  },
                  {
                    "type": 1,
                    "string": "read"
                  },
                  {
                    "type": 1,
                    "string": "write"
                  },
                  {
                    "type": 1,
                    "string": "execute"
                  }
                ],
                "mapValue": [
                  {
                    "type": 1,
                    "string": "cleanads.consent"
                  },
                  {
                    "type": 8,
                    "boolean": true
                  },
                  {
                    "type": 8,
                    "boolean": false
                  },
                  {
                    "type": 8,
                    "boolean": true
                  }
                ]
              }
            ]
          }
        }
      ]
    },
    "clientAnnotations": {
      "isEditedByUser": true
    },
    "isRequired": true
  },
  {
    "instance": {
      "key": {
        "publicId": "access_consent",
        "versionId": "1"
      },
      "param": [
        {
          "key": "consentTypes",
          "value": {
            "type": 2,
            "listItem": [
              {
                "type": 3,
                "mapKey": [
                  {
                    "type": 1,
                    "string": "consentType"
                  },
                  {
                    "type": 1,
                    "string": "read"
                  },
                  {
                    "type": 1,
                    "string": "write"
                  }
                ],
                "mapValue": [
                  {
                    "type": 1,
                    "string": "ad_storage"
                  },
                  {
                    "type": 8,
                    "boolean": true
                  },
                  {
                    "type": 8,
                    "boolean": false
                  }
                ]
              }
            ]
          }
        }
      ]
    },
    "clientAnnotations": {
      "isEditedByUser": true
    },
    "isRequired": true
  },
  {
    "instance": {
      "key": {
        "publicId": "logging",
        "versionId": "1"
      },
      "param": [
        {
          "key": "environments",
          "value": {
            "type": 1,
            "string": "debug"
          }
        }
      ]
    },
    "clientAnnotations": {
      "isEditedByUser": true
    },
    "isRequired": true
  }
]


___TESTS___

scenarios:
- name: injects t.js from the server, with the site
  code: |-
    mock('copyFromWindow', () => undefined);
    let injected;
    mock('injectScript', (url, onSuccess, onFailure, cacheToken) => {
      injected = url;
      onSuccess();
    });
    runCode({serverUrl: 'https://t.example.com/', siteId: 'dent', followConsent: false});
    assertThat(injected).isEqualTo('https://t.example.com/t.js?site=dent');
    assertApi('createQueue').wasNotCalled();
    assertApi('gtmOnSuccess').wasCalled();
- name: queues the consent before t.js loads
  code: |-
    mock('copyFromWindow', () => undefined);
    mock('isConsentGranted', () => false);
    let queued = [];
    mock('createQueue', () => (call) => { queued.push(call); });
    runCode({serverUrl: 'https://t.example.com', siteId: 'dent', followConsent: true});
    assertThat(queued).isEqualTo([['consent', false]]);
    assertApi('addConsentListener').wasCalled();
    assertApi('injectScript').wasCalled();
- name: does nothing when t.js is there already
  code: |-
    mock('copyFromWindow', () => ({v: 2}));
    runCode({serverUrl: 'https://t.example.com', siteId: 'dent', followConsent: true});
    assertApi('injectScript').wasNotCalled();
    assertApi('gtmOnSuccess').wasCalled();


___NOTES___

CleanAds (cleanads/cleanads), packaging/gtm/template.tpl. Import it in Tag
Manager: Templates, Tag Templates, New, the menu, Import. See
packaging/gtm/README.md.
