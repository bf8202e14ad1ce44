"""The staff pages: the account list, one account with its locks and actions, the lock audit.

Only active staff get in: an anonymous visitor is sent to the login page, anyone else gets
403. Every change goes through :mod:`accounts.store` (the uniqueness engine), lock repairs
through :mod:`accounts.audit`; every change is a POST carrying Django's CSRF token. No page
scans the table: the lock audit shows the last report the table keeps, and an audit runs
outside the request (``accounts_audit``, or a thread the page starts).
"""

from concurrent.futures import ThreadPoolExecutor

from django.contrib import messages
from django.contrib.auth.mixins import UserPassesTestMixin
from django.http import Http404, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views import View
from django.views.decorators.cache import never_cache

from .. import addresses, audit, dynamo, notices, sessions, signup_fields, store, timeline, verification
from ..adapter import get_adapter
from ..audit import background, reports
from ..audit.checking import Scope
from ..exceptions import ActorRefused, Busy, InvalidUniqueValue, LastMember, StaleItem, UniqueViolation
from ..forms import STORE_REFUSALS
from ..mfa import store as mfa_store
from ..mfa.flows import reauthentication
from ..mfa.policy import SecondFactorRequiredForStaffMixin
from ..models import User
from ..tables import ACCOUNT_PREFIX, is_gone
from . import hierarchy, records, scans
from .forms import FLAGS, FlagForm, RepairForm, StaffEmailForm, StaffSetPasswordForm, StaffUsernameForm

# Findings of the stored report shown per page, and repaired per "repair all".
FINDINGS_PER_PAGE = 100
REPAIRS_PER_REQUEST = 50
# How often the lock audit page reloads while an audit runs.
REFRESH_SECONDS = 5
LOCK_STATUS_LABELS = {
    "ok": gettext_lazy("ok"),
    "missing": gettext_lazy("missing"),
    "other_owner": gettext_lazy("owned by another account"),
    "no_owner": gettext_lazy("names no owner"),
    "malformed": gettext_lazy("stored with the wrong type"),
    "invalid": gettext_lazy("cannot be locked"),
}
LAST_STAFF_MESSAGE = gettext_lazy("%(username)s is the last active staff account: make another staff account first.")
REPAIR_MESSAGES = {
    audit.REPAIRED: gettext_lazy("Repaired %(key)s: lock %(action)s."),
    audit.CHANGED: gettext_lazy("Not repaired %(key)s: %(detail)s"),
    audit.NOTHING_TO_DO: gettext_lazy("Not repaired %(key)s: %(detail)s"),
    audit.NOT_REPAIRABLE: gettext_lazy("Not repaired %(key)s: %(detail)s"),
    audit.FAILED: gettext_lazy("Repair of %(key)s failed: %(detail)s"),
}
REPAIR_ACTIONS = {
    audit.RELEASED: gettext_lazy("released"),
    audit.CLAIMED: gettext_lazy("claimed"),
    audit.TRANSFERRED: gettext_lazy("transferred"),
    audit.REWRITTEN: gettext_lazy("written again"),
    audit.RECORDED: gettext_lazy("recorded in its account"),
    audit.LISTED: gettext_lazy("listed in its registry"),
    audit.UNLISTED: gettext_lazy("taken out of its registry"),
}


def account_id_of(pk):
    """The account id in an account PK, or ``None`` when ``pk`` is not an account's."""
    return pk[len(ACCOUNT_PREFIX) :] if pk and pk.startswith(ACCOUNT_PREFIX) else None


def find_account(query):
    """The account whose email (a query with ``@``) or username is ``query``, through its
    lock item (consistent reads, never a Scan), or ``None``."""
    try:
        return store.get_by_identifier(query)
    except InvalidUniqueValue:
        return None


def _lock_row(state):
    owner_id = account_id_of(state.owner) if state.status == "other_owner" else None
    return {"lock": state, "label": LOCK_STATUS_LABELS[state.status], "owner_id": owner_id}


class FreshProofRequiredMixin:
    """Staff actions are sensitive actions: every POST (each changes an account, a staff
    member or the locks) and every confirmation page before one needs the staff member's
    own proof of identity within ``ACCOUNTS_REAUTHENTICATION_TIMEOUT``, as the person's own
    sensitive pages do. Without it a stolen or forgotten staff session would take over any
    account silently. It runs after the staff check, so others still get 403."""

    # A GET page that confirms a change (its form POSTs it).
    confirms_a_change = False

    def dispatch(self, request, *args, **kwargs):
        needs_proof = request.method == "POST" or self.confirms_a_change
        if needs_proof and not reauthentication.is_fresh(request):
            return redirect(reauthentication.reauthenticate_url(request, back_to=self.back_after_proof(request)))
        return super().dispatch(request, *args, **kwargs)

    def back_after_proof(self, request):
        """Where the reauthentication page sends the staff member back to: this page for a
        GET; after a POST (which cannot be replayed), the account's page, or the lock audit."""
        if request.method == "GET":
            return request.get_full_path()
        account_id = self.kwargs.get("account_id")
        return reverse("staff:account", args=[account_id]) if account_id else reverse("staff:locks")


@method_decorator(never_cache, name="dispatch")
class StaffView(SecondFactorRequiredForStaffMixin, UserPassesTestMixin, FreshProofRequiredMixin, View):
    """Active staff only: anonymous -> the login page, anyone else -> 403 (and with
    ``ACCOUNTS_MFA_REQUIRED_FOR_STAFF``, staff without a second factor -> its set-up); a
    change needs a fresh proof of identity (:class:`FreshProofRequiredMixin`)."""

    def test_func(self):
        user = self.request.user
        return user.is_authenticated and user.is_active and user.is_staff

    def get_login_url(self):
        return get_adapter(self.request).get_login_url(self.request)

    def origin(self) -> timeline.Origin:
        """Where the security events of this page's changes come from: the request, and the
        staff member acting (named in each event of another account's timeline)."""
        return timeline.origin_of(self.request, actor=str(self.request.user.pk))


class AccountListView(StaffView):
    """``/staff/``: accounts, 50 a page in Scan order, or the one account ``?q=`` names."""

    template_name = "accounts/staff/account_list.html"

    def get(self, request):
        query = request.GET.get("q", "").strip()
        if query:
            found = find_account(query)
            return render(request, self.template_name, {"query": query, "accounts": [found] if found else []})
        try:
            page = scans.account_page(request.GET.get("cursor"))
        except scans.InvalidCursor as error:
            return render(request, self.template_name, {"cursor_error": str(error), "accounts": []}, status=400)
        return render(request, self.template_name, {"page": page, "accounts": page.accounts})


class AccountView(StaffView):
    """Base of the pages about one account (``<account_id>`` in the URL). A change (a POST,
    or the page confirming one) of a superuser's account by a staff member who is no
    superuser is refused before anything is sent (:mod:`.hierarchy`), and so is one whose
    transaction finds the staff member demoted meanwhile: the account's page again, saying so."""

    template_name = "accounts/staff/account_detail.html"

    def dispatch(self, request, *args, **kwargs):
        try:
            return super().dispatch(request, *args, **kwargs)
        except (hierarchy.SuperuserOnly, ActorRefused):
            messages.error(request, hierarchy.REFUSED_MESSAGE)
            return redirect("staff:account", kwargs["account_id"])

    def get_account(self):
        account = store.get_account(self.kwargs["account_id"])
        if account is None:
            raise Http404("No such account.")
        changes = self.request.method == "POST" or self.confirms_a_change
        if changes and not hierarchy.may_act_on(self.request.user, account):
            raise hierarchy.SuperuserOnly(f"Staff {self.request.user.pk} may not change superuser {account.id}.")
        return account

    def detail_url(self, account):
        return reverse("staff:account", args=[account.id])

    def render_detail(self, account, status=200, **forms):
        """The account page, with ``forms`` (bound, with errors) in place of blank ones."""
        user = User.from_account(account)
        # The sessions and the last events of the account's timeline: one Query of its partition.
        others, events = dynamo.query_partition_and_events(account.PK, timeline.SHOWN)
        context = {
            "account": account,
            "locks": [_lock_row(state) for state in audit.lock_states(account)],
            "email_form": StaffEmailForm(user),
            "username_form": StaffUsernameForm(user) if signup_fields.has_username() else None,
            "password_form": StaffSetPasswordForm(user),
            "flags": FLAGS,
            "sessions": sessions.list_sessions(account.id, sessions=sessions.live_sessions(others))
            if sessions.in_use()
            else None,
            "passkeys": mfa_store.passkeys_of(account),
            "addresses": addresses.addresses_of(account) if addresses.enabled() else None,
            "events": timeline.events_of([raw for raw in events if not is_gone(raw)]),
            **forms,
        }
        return render(self.request, self.template_name, context, status=status)

    def refuse_last_staff(self, account):
        """Say that ``account`` is the last active staff account: the transaction that
        would have taken its access away was refused (its check on another staff member's
        registry entry found none), and nothing was written."""
        messages.error(self.request, LAST_STAFF_MESSAGE % {"username": account.display_name})
        return redirect(self.detail_url(account))


class AccountDetailView(AccountView):
    """``/staff/accounts/<id>/``: the account, its lock items side by side, its actions."""

    def get(self, request, account_id):
        return self.render_detail(self.get_account())


class AccountFormView(AccountView):
    """A POST of one of the account page's forms; a refused form shows the page again. A
    saved one is told to the account's address as it was (:meth:`saved`) and recorded
    (:func:`accounts.staff.records.record`, as :attr:`action`)."""

    form_class = None
    context_name = None
    action = None

    def post(self, request, account_id):
        account = self.get_account()
        before = notices.addressee(account)
        form = self.form_class(User.from_account(account), request.POST)
        if form.is_valid():
            try:
                form.save(origin=self.origin())
            except STORE_REFUSALS as error:
                form.add_store_error(error)
            else:
                self.saved(account, before)
                records.record(request, account, self.action, self.description(account))
                messages.success(request, self.success_message(account))
                return redirect(self.detail_url(account))
        return self.render_detail(account, **{self.context_name: form})

    def saved(self, account, before):
        """What follows the saved change of ``account`` (as it is now; ``before``: its
        :class:`~accounts.notices.Addressee` as read before): the notice."""


class EmailChangeView(AccountFormView):
    form_class = StaffEmailForm
    context_name = "email_form"
    action = "email"

    def saved(self, account, before):
        if store.is_same_address(account, before.email):
            return
        # The new mailbox proves it is the owner's; the old one is told it no longer gets mail.
        verification.send_verification(self.request, account)
        notices.email_set_by_staff(self.request, before, account)

    def description(self, account):
        return f"set the email address to {account.email}, unverified"

    def success_message(self, account):
        return _("The email address of %(username)s is now %(email)s.") % {
            "username": account.display_name,
            "email": account.email,
        }


class UsernameChangeView(AccountFormView):
    form_class = StaffUsernameForm
    context_name = "username_form"
    action = "username"

    def post(self, request, account_id):
        if not signup_fields.has_username():
            raise Http404("This site has no usernames (ACCOUNTS_SIGNUP_FIELDS).")
        return super().post(request, account_id)

    def saved(self, account, before):
        if account.username != before.username:
            notices.username_changed(self.request, before, account, by_staff=True)

    def description(self, account):
        return f"changed the username to {account.username}" if account.username else "removed the username"

    def success_message(self, account):
        if not account.username:
            return _("%(email)s has no username now.") % {"email": account.email}
        return _("The username of %(email)s is now %(username)s.") % {
            "email": account.email,
            "username": account.username,
        }


class SetPasswordView(AccountFormView):
    form_class = StaffSetPasswordForm
    context_name = "password_form"
    action = "password"

    def saved(self, account, before):
        notices.password_changed(self.request, before, account, reset=False, by_staff=True)

    def description(self, account):
        return "set a new password"

    def success_message(self, account):
        return _("%(username)s has a new password; their sessions have ended.") % {"username": account.display_name}


class FlagView(AccountView):
    """Confirm (GET), then turn (POST) an account's ``is_active`` or ``is_staff`` flag on or off."""

    template_name = "accounts/staff/account_flag.html"
    confirms_a_change = True

    def get(self, request, account_id):
        account = self.get_account()
        form = FlagForm(request.GET)
        if not form.is_valid():
            return HttpResponseBadRequest(_("Unknown flag or value."))
        return render(request, self.template_name, {"account": account, **form.cleaned_data})

    def post(self, request, account_id):
        account = self.get_account()
        before = notices.addressee(account)
        form = FlagForm(request.POST)
        if not form.is_valid():
            return HttpResponseBadRequest(_("Unknown flag or value."))
        flag, value = form.cleaned_data["flag"], form.cleaned_data["value"]
        try:
            form.save(account, origin=self.origin())
        except LastMember:
            return self.refuse_last_staff(account)
        except (Busy, StaleItem):
            messages.error(request, _("The account changed or the site was busy; nothing was saved. Try again."))
        except InvalidUniqueValue as error:
            # Legacy data a flag change should never touch; if it does, say so, not a 500.
            messages.error(
                request,
                _("Nothing was saved: %(fields)s: %(message)s")
                % {"fields": ", ".join(sorted(error.fields)), "message": error.message},
            )
        else:
            records.record(request, account, flag, f"turned {flag} {'on' if value else 'off'}")
            hierarchy.tell_owner(request, before, account, f"{flag}_{'on' if value else 'off'}")
            message = _("%(username)s: %(flag)s is on.") if value else _("%(username)s: %(flag)s is off.")
            messages.success(request, message % {"username": account.display_name, "flag": FLAGS[flag]})
        return redirect(self.detail_url(account))


class EndSessionsView(AccountView):
    """End every session of the account: each of its cookies is anonymous from now on."""

    def post(self, request, account_id):
        account = self.get_account()
        ended = store.log_out_everywhere(account, origin=self.origin())
        records.record(request, account, "sessions_ended", f"ended {ended} session(s)")
        hierarchy.tell_owner(request, notices.addressee(account), account, "sessions_ended")
        message = ngettext(
            "Ended %(count)d session of %(username)s.", "Ended %(count)d sessions of %(username)s.", ended
        )
        messages.success(request, message % {"count": ended, "username": account.display_name})
        return redirect(self.detail_url(account))


class VerificationView(AccountView):
    """Resend an account's verification mail, or mark its address verified (through the
    engine: the account takes its email lock, guarded like any sign-up)."""

    def post(self, request, account_id):
        account = self.get_account()
        if store.is_verified(account):
            messages.info(request, _("%(email)s is already verified.") % {"email": account.email})
        elif request.POST.get("action") == "verify":
            self.mark_verified(request, account)
        else:
            outcome = verification.resend_verification(request, account)
            get_adapter(request).add_verification_message(request, outcome, account.email)
        return redirect(self.detail_url(account))

    def mark_verified(self, request, account):
        try:
            store.verify_email(account, origin=self.origin())
        except UniqueViolation:
            messages.error(
                request, _("Another account holds %(email)s: nothing was changed.") % {"email": account.email}
            )
        except (Busy, StaleItem):
            messages.error(request, _("The account changed or the site was busy; nothing was saved. Try again."))
        else:
            records.record(request, account, "email_verified", f"marked {account.email} verified")
            hierarchy.tell_owner(request, notices.addressee(account), account, "email_verified")
            messages.success(
                request, _("%(email)s is now verified and locked to this account.") % {"email": account.email}
            )


class AccountDeleteView(AccountView):
    """Confirm (GET), then delete (POST) an account and release its locks."""

    template_name = "accounts/staff/account_delete.html"
    confirms_a_change = True

    def get(self, request, account_id):
        return render(request, self.template_name, {"account": self.get_account()})

    def post(self, request, account_id):
        account = self.get_account()
        before = notices.addressee(account)
        try:
            store.delete_account(account, origin=self.origin())
        except LastMember:
            return self.refuse_last_staff(account)
        except (Busy, StaleItem):
            messages.error(request, _("The account changed or the site was busy; nothing was deleted. Try again."))
            return redirect(self.detail_url(account))
        named = f"{account.username}, {account.email}" if account.username else account.email
        records.record(request, account, "deleted", f"deleted the account ({named})")
        hierarchy.tell_owner(request, before, account, "deleted")
        if account.username:
            deleted = {"username": account.username, "email": account.email}
            messages.success(request, _("Deleted the account %(username)s (%(email)s).") % deleted)
        else:
            messages.success(request, _("Deleted the account %(email)s.") % {"email": account.email})
        return redirect("staff:accounts")


def _finding_row(stored):
    finding = stored.finding
    return {
        "stored": stored,
        "finding": finding,
        "holders": [(pk, account_id_of(pk)) for pk in finding.holders],
        # Accounts by id; items of other audited models (ACCOUNTS_UNIQUE_MODELS) by PK.
        "holder_ids": [account_id_of(pk) or pk for pk in finding.holders],
        "owner_id": account_id_of(finding.owner) if finding.owner_status == audit.OWNER_CHANGED else None,
        "repaired": stored.outcome == audit.REPAIRED,
    }


def _scope():
    return Scope(audit.audited_models())


class LockAuditView(StaffView):
    """``/staff/locks/``: the last audit report the table keeps (its age, its findings with a
    repair button each, "repair all"), an audit running now, and how to start one. Two
    ``Query`` requests, whatever the size of the table."""

    template_name = "accounts/staff/locks.html"

    def get(self, request):
        runs = reports.recent_runs()
        latest = reports.latest_finished(runs)
        newer = runs[0] if runs and runs[0] is not latest else None
        context = {"latest": latest, "newer": newer, "rows": [], "segments": background.SEGMENTS}
        if latest is not None:
            after = request.GET.get("after", "")
            start = reports.page_key(latest.run_id, int(after)) if after.isdigit() else None
            found, next_key = reports.stored_findings(latest.run_id, _scope(), start_key=start, limit=FINDINGS_PER_PAGE)
            context["rows"] = [_finding_row(stored) for stored in found]
            context["next_after"] = found[-1].index if next_key is not None and found else None
            context["first_page"] = start is None
        response = render(request, self.template_name, context)
        if newer is not None and newer.running:
            # Browsers reload a page answered with "Refresh": the progress moves on its own.
            response["Refresh"] = str(REFRESH_SECONDS)
        return response


class RunAuditView(StaffView):
    """Start an audit of the whole table in a thread of this process (not in the request);
    the lock audit page shows its progress, then its report."""

    def post(self, request):
        if background.start() is None:
            messages.warning(request, _("An audit is already running; its progress is below."))
        else:
            messages.success(request, _("The audit has started; this page shows its progress."))
        return redirect("staff:locks")


def _record(data, result):
    """Remember on the stored report how the repair of its finding ended, when the button
    came from the stored report."""
    if data.get("run") and data.get("index") is not None:
        reports.record_outcome(data["run"], data["index"], result.outcome)


class RepairView(StaffView):
    """Repair one finding, after reading its lock and accounts again."""

    def post(self, request):
        form = RepairForm(request.POST)
        if not form.is_valid():
            return HttpResponseBadRequest(_("Unknown finding."))
        data = form.cleaned_data
        try:
            result = audit.repair_key(data["kind"], data["namespace"], data["key"], data["holder"])
        except KeyError:
            return HttpResponseBadRequest(_("Unknown lock namespace or key."))
        _record(data, result)
        action = REPAIR_ACTIONS.get(result.action, result.action)
        message = REPAIR_MESSAGES[result.outcome] % {"key": data["key"], "action": action, "detail": result.detail}
        (messages.success if result.repaired else messages.warning)(request, message)
        next_url = request.POST.get("next", "")
        if url_has_allowed_host_and_scheme(next_url, {request.get_host()}, require_https=request.is_secure()):
            return redirect(next_url)
        return redirect("staff:locks")


def _repair_stored(stored):
    """Repair one stored finding as it stands now: read again, then one guarded transaction."""
    finding = stored.finding
    holder_ids = [account_id_of(pk) or pk for pk in finding.holders]
    try:
        result = audit.repair_key(finding.kind, finding.namespace, finding.key, holder_ids)
    except KeyError:
        # Its namespace is no longer audited (ACCOUNTS_UNIQUE_MODELS changed since).
        result = audit.Repair(finding, audit.NOT_REPAIRABLE, detail=finding.describe())
    reports.record_outcome(stored.run_id, stored.index, result.outcome)
    return result


class RepairAllView(StaffView):
    """Repair the findings of the last report, each read again and repaired by its own
    guarded transaction, at most :data:`REPAIRS_PER_REQUEST` a request."""

    def post(self, request):
        latest = reports.latest_finished(reports.recent_runs())
        if latest is None:
            messages.warning(request, _("There is no audit report yet: run the audit first."))
            return redirect("staff:locks")
        chosen, left, more, start = [], 0, False, None
        while True:
            found, start = reports.stored_findings(latest.run_id, _scope(), start_key=start, limit=FINDINGS_PER_PAGE)
            for stored in found:
                if stored.outcome == audit.REPAIRED:
                    continue
                if stored.finding.repairable and len(chosen) < REPAIRS_PER_REQUEST:
                    chosen.append(stored)
                else:
                    more = more or stored.finding.repairable
                    left += 1
            if start is None or more:
                break
        with ThreadPoolExecutor(max_workers=audit.REPAIR_WORKERS) as pool:
            results = list(pool.map(_repair_stored, chosen))
        repaired = sum(1 for result in results if result.repaired)
        left += len(chosen) - repaired
        counts = {"repaired": repaired, "total": latest.findings}
        messages.success(request, _("Repaired %(repaired)d of %(total)d finding(s).") % counts)
        if more:
            messages.warning(request, _("More findings wait for a repair: press “Repair all” again."))
        elif left:
            messages.warning(
                request,
                _(
                    "%(left)d finding(s) remain: duplicates need a person to choose, "
                    "and a lock that changed since it was read is left for the next audit."
                )
                % {"left": left},
            )
        return redirect("staff:locks")
