"""The members site's adapter: stores the phone number and names its collision."""

from accounts.adapter import DefaultAccountAdapter


class MemberAdapter(DefaultAccountAdapter):
    """Signups store the phone number; a phone number in use has its own message."""

    error_messages = {
        **DefaultAccountAdapter.error_messages,
        "phone_taken": "This phone number is already in use.",
    }

    def get_signup_attributes(self, request, form):
        return {"phone": form.cleaned_data["phone"] or None}
