/**
 * Ctrl+K / ⌘K from anywhere: find a patient by name, date of birth (YYYY-MM-DD) or MRN and open the
 * record. Keyboard first: type, arrow keys move through the results, Enter opens, Escape closes.
 */
import { useNavigate } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { Autocomplete, Input, Menu, MenuItem, SearchField } from 'react-aria-components';
import { PatientOption, usePatientSearchAsTyped } from '../pages/patients/patient-picker.js';
import { Icon } from './icons.js';
import { AppDialog } from './ui/dialog.js';

export function CommandPalette() {
  const [open, setOpen] = useState(false);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        setOpen(true);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  return (
    <>
      <button
        type="button"
        className="search-button"
        onClick={() => setOpen(true)}
        aria-label="Find a patient (Ctrl+K)"
        data-testid="open-search"
      >
        <Icon name="search" />
        <span className="search-button-label">Find a patient…</span>
        <kbd className="search-button-kbd">Ctrl K</kbd>
      </button>
      <AppDialog title="Find a patient" isOpen={open} onOpenChange={setOpen} isDismissable testId="command-palette">
        <PaletteSearch onDone={() => setOpen(false)} />
      </AppDialog>
    </>
  );
}

function PaletteSearch({ onDone }: { onDone: () => void }) {
  const navigate = useNavigate();
  const [text, setText] = useState('');
  // A result chosen from the answer to what was typed before opens only if the answer to what is typed holds it
  // too; otherwise the palette stays open on that answer (a quick typist never lands on another patient's record).
  const { q, results, items, choose } = usePatientSearchAsTyped(text, (patient) => {
    onDone();
    void navigate({ to: '/patients/$patientId', params: { patientId: patient.id } });
  });
  return (
    <Autocomplete inputValue={text} onInputChange={setText}>
      <SearchField aria-label="Name, date of birth or MRN" className="palette-field" autoFocus>
        <Input className="palette-input" placeholder="Name, date of birth (YYYY-MM-DD) or MRN" />
      </SearchField>
      <Menu
        className="palette-results"
        aria-label="Matching patients"
        items={items}
        onAction={(key) => choose(String(key))}
        renderEmptyState={() => (
          <p className="muted palette-empty" data-testid="palette-empty">
            {!q ? 'Start typing to search.' : results.isFetching ? 'Searching…' : `No patient matches “${q}”.`}
          </p>
        )}
      >
        {(patient) => (
          <MenuItem
            id={patient.id}
            className="menu-item palette-item"
            textValue={`${patient.givenName} ${patient.familyName}`}
            data-testid="palette-result"
          >
            <PatientOption patient={patient} />
          </MenuItem>
        )}
      </Menu>
    </Autocomplete>
  );
}
