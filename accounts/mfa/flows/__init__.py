"""What each page of second factors does, as plain functions (as django-allauth's
``internal/flows``): :mod:`.login` (the second step, passkey login, the sign-in),
:mod:`.reauthentication`, :mod:`.authenticators` (setting factors up and removing them),
:mod:`.signup` (signing up with a passkey)."""
