"""Phone numbers, as django-allauth 65 has them: a number per account, unique once verified.

``ACCOUNTS_SIGNUP_FIELDS`` may ask for ``phone`` (or ``phone*``) and ``ACCOUNTS_LOGIN_METHODS``
may log in by ``phone``. A number is kept in E.164, parsed by Google's libphonenumber
(:mod:`.numbers`), and locked under ``UNIQ#PHONE#<E.164>`` like an address: only a number
whose texted code was typed back holds its lock (the constraint's ``partial_on``), so
``+81 90-1234-5678`` and ``+819012345678`` are one lock, and a number nobody proved is
nobody's. The code travels through the adapter's ``send_verification_code_sms``, which the
host project implements (:mod:`.codes`); its single use, tries and binding are the flows'
(:mod:`.flows`); the pages are :mod:`.views`, the API's operations
:mod:`accounts.headless.phone_views`.
"""
