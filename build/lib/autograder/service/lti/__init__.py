"""LTI 1.3 Advantage for the service: launch, deep linking, grade passback (AGS) and roster sync (NRPS).

HTTP-free core (no Starlette; outbound calls to the platform with httpx), one job per module:

* :mod:`.tables` - the LTI tables, on the service's metadata;
* :mod:`.keys` - the tool's RSA keys in ``DATA/lti/keys`` (rotation keeps old public keys published a while);
* :mod:`.registry` - registered platforms and their cached key sets;
* :mod:`.launch` - login initiation (state, nonce) and id_token validation (PyJWT), role mapping;
* :mod:`.enroll` - sign-in of a verified launch: accounts, roster links, one-time handoff tickets;
* :mod:`.deeplink` - the signed deep-linking response with a line item;
* :mod:`.ags` - OAuth 2 client-credentials tokens (signed client assertion), line items, scores;
* :mod:`.passback` - the durable, exactly-once passback queue and its worker;
* :mod:`.nrps` - roster sync over the memberships service (Link paging).

The web side (the ``/lti`` routes) is :mod:`autograder.service.web.lti`, mounted by the app like the other web modules.

Cryptography: PyJWT (with ``cryptography``) signs and verifies every JWT; ``cryptography`` makes the keys.
"""
