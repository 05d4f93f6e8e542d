"""The skill tools' view of a workspace's skills (satisfies `xum.tools.base.SkillAccess`).

Every call refreshes the catalog, so a skill added a moment ago can be read, listed, changed or
deleted at once. Writes and deletes go through `xum.context.skill_store`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xum.context.skills import SkillNotFound, bounded_body, read_skill_file

if TYPE_CHECKING:
    from xum.context.skill_store import SkillStore
    from xum.context.workspace import WorkspaceContext
    from xum.tools.skill_records import DeleteTarget, SkillChange, SkillListing, SkillScope


class CatalogSkills:
    # Every session makes one when it opens; the store (writes, deletes) and the tools' records
    # load with the first call that needs them, not on the way to the first request.
    def __init__(self, context: WorkspaceContext) -> None:
        self.context = context
        self._store: SkillStore | None = None

    @property
    def store(self) -> SkillStore:
        if self._store is None:
            from xum.context.skill_store import SkillStore

            facts = self.context.facts
            self._store = SkillStore(facts.runtime, facts.workspace_path, facts.xum_root)
        return self._store

    async def skill_names(self) -> list[str]:
        catalog = await self.context.skill_catalog()
        return sorted(catalog.skills)

    async def skill_body(self, name: str) -> str:
        catalog = await self.context.skill_catalog()
        skill = catalog.get(name)
        if skill is None:
            raise SkillNotFound(name)
        return bounded_body(skill)

    async def skill_file(self, name: str, file_path: str, limit: int) -> bytes:
        catalog = await self.context.skill_catalog()
        skill = catalog.get(name)
        if skill is None:
            raise SkillNotFound(name)
        return await read_skill_file(skill, file_path, limit=limit)

    async def list_skills(self) -> list[SkillListing]:
        from xum.tools.skill_records import SkillListing

        catalog = await self.context.skill_catalog()
        return [
            SkillListing(
                name=s.name,
                description=s.description,
                scope=s.scope,
                root=s.root_label,
                advertised=s.advertised,
                user_invocable=s.user_invocable,
                writable=s.writable,
            )
            for s in sorted(catalog.skills.values(), key=lambda s: s.name)
        ]

    async def write_skill(
        self, scope: SkillScope, name: str, file_path: str | None, content: str
    ) -> SkillChange:
        from xum.tools.skill_records import SkillChange

        change = await self.store.write(scope, name, file_path, content)
        return SkillChange(change.path, change.created, await self._shadow_note(scope, name))

    async def delete_skill(
        self, scope: SkillScope, name: str, target: DeleteTarget, file_path: str | None
    ) -> SkillChange:
        from xum.tools.skill_records import SkillChange

        try:
            change = await self.store.delete(scope, name, target, file_path)
        except LookupError:
            raise SkillNotFound(await self._not_there(scope, name)) from None
        note = ""
        if target == "skill":
            survivor = (await self.context.skill_catalog()).get(name)
            if survivor is not None:
                note = f"another skill named {name} is still available, from {survivor.root_label}"
        return SkillChange(change.path, change.created, note)

    async def _shadow_note(self, scope: SkillScope, name: str) -> str:
        """A note when the skill just written is not the one its name finds (a project skill
        hides a global one of the same name)."""
        skill = (await self.context.skill_catalog()).get(name)
        if skill is None or skill.scope == scope:
            return ""
        return (
            f"a {skill.scope} skill of the same name ({skill.root_label}/{name}) takes "
            "precedence, so this one is not what the name loads"
        )

    async def _not_there(self, scope: SkillScope, name: str) -> str:
        """Why there is nothing of that name to delete in `scope`, for the model."""
        label = self.store.root_label(scope)
        skill = (await self.context.skill_catalog()).get(name)
        if skill is None:
            return f"there is no skill named {name} in {label}"
        if not skill.writable:
            return (
                f"the skill {name} comes from {skill.root_label}, which is read-only for xum's "
                "skill tools (only .xum/skills and ~/.xum/skills are changed)"
            )
        return f"there is no skill named {name} in {label}; it lives in {skill.root_label}"
